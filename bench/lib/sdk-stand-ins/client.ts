/**
 * Measurement only (`npm run bench -- --only=cold --stand-ins`): stand-ins for the Batch, SageMaker, CloudWatch
 * Logs and EventBridge SDK clients that send each command as one signed request, as a client of our own would
 * (no retries, no error mapping: never bundled into the stack). They answer "what would the functions that
 * call those services cost without the AWS SDK?" — the question issue 12's remaining cold-init goal turns on.
 */
import { signPost } from '../../../lib/store/dynamodb/signer.js';

interface Service {
  serviceId: string;
  /** SigV4 signing name. */
  signing: string;
  /** JSON 1.1 target prefix; undefined for REST-JSON (Batch: `POST /v1/<operation>`). */
  target?: string;
}

/** A command: its input, and the operation its class names. */
export class StandInCommand {
  static operation = '';
  constructor(readonly input: object = {}) {}
}

/** A command class for `operation`. */
export function command(operation: string): typeof StandInCommand {
  return class extends StandInCommand {
    static override operation = operation;
  };
}

let http: typeof import('node:http') | undefined;

/** A client class for `service` that sends every command to `AWS_ENDPOINT_URL`. */
export function client(service: Service) {
  return class {
    readonly config: Record<string, unknown>;
    readonly middlewareStack = { add() {} };
    constructor(config: Record<string, unknown> = {}) {
      this.config = { serviceId: service.serviceId, region: process.env.AWS_REGION, ...config };
    }
    async send(sent: StandInCommand): Promise<Record<string, unknown>> {
      http ??= await import('node:http');
      const operation = (sent.constructor as typeof StandInCommand).operation;
      const url = new URL(process.env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1');
      const body = JSON.stringify(sent.input);
      const headers: Record<string, string> =
        service.target === undefined
          ? { 'content-type': 'application/json' }
          : {
              'content-type': 'application/x-amz-json-1.1',
              'x-amz-target': `${service.target}.${operation}`,
            };
      const signed = signPost({
        host: url.host,
        headers,
        body,
        region: process.env.AWS_REGION ?? 'us-east-1',
        service: service.signing,
        credentials: {
          accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? '',
          secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? '',
          ...(process.env.AWS_SESSION_TOKEN ? { sessionToken: process.env.AWS_SESSION_TOKEN } : {}),
        },
        time: new Date(),
      });
      const path = service.target === undefined ? `/v1/${operation.toLowerCase()}` : '/';
      const text = await new Promise<string>((resolve, reject) => {
        const request = (http as typeof import('node:http')).request(
          { host: url.hostname, port: url.port, method: 'POST', path, headers: signed },
          (response) => {
            let data = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => {
              data += chunk;
            });
            response.on('end', () => resolve(data));
          },
        );
        request.on('error', reject);
        request.end(body);
      });
      return { ...(JSON.parse(text || '{}') as Record<string, unknown>), $metadata: { httpStatusCode: 200 } };
    }
    destroy(): void {}
  };
}
