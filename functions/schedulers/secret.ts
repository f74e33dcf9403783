/**
 * Reads the Slurm JWT key from Secrets Manager (`GetSecretValue`) with the SDK's client, in the secret's own
 * region, credentials from the function's role. Imported by slurm's module when a token is first needed.
 */
import {
  GetSecretValueCommand,
  type GetSecretValueCommandOutput,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';

/** The region of a secret's ARN (`arn:aws:secretsmanager:<region>:…`). */
export function secretRegion(arn: string): string {
  const region = arn.split(':')[3];
  if (!arn.startsWith('arn:') || !region) throw new Error(`'${arn}' is not a Secrets Manager secret ARN`);
  return region;
}

/** A Secrets Manager client for the secret's region. */
export function secretsClient(arn: string): SecretsManagerClient {
  return new SecretsManagerClient({ region: secretRegion(arn) });
}

/**
 * The secret's bytes: `SecretBinary`, or `SecretString` read as base64 (how a 32-byte JWT key is stored).
 *
 * @throws Error naming the secret and what Secrets Manager answered.
 */
export async function readSecretBytes(arn: string, client: SecretsManagerClient): Promise<Buffer> {
  let answer: GetSecretValueCommandOutput;
  try {
    answer = await client.send(new GetSecretValueCommand({ SecretId: arn }));
  } catch (error) {
    const { name, message } = error as Error;
    throw new Error(`secretsmanager:GetSecretValue on ${arn} failed: ${name}: ${message}`, { cause: error });
  }
  if (answer.SecretBinary !== undefined) return Buffer.from(answer.SecretBinary);
  return Buffer.from((answer.SecretString ?? '').trim(), 'base64');
}
