/**
 * The functions' configuration: every environment variable of env-names.ts read and checked in one place,
 * once per cold start (the container caches it). A bad value stops the function with a message naming the
 * variable, the value and what it accepts, instead of falling back silently to a default.
 */
import { DEFAULT_SESSION } from '../../lib/specs/index.js';
import {
  type KubernetesSettings,
  readKubernetesSettings,
  readSlurmSettings,
  type SlurmSettings,
} from '../schedulers/settings.js';
import { commaList, DEFAULT_WORKSPACE_DAYS, ENV } from './env-names.js';

/** Schedulers enabled when TXS_SCHEDULERS is not set (the deployed stack). */
export const DEFAULT_SCHEDULERS: readonly string[] = ['aws_batch', 'aws_sagemaker'];

/**
 * Every scheduler a function can run: the one list of names (the scheduler table is typed by it, so a
 * scheduler without a backend, or a backend the config refuses, does not compile).
 */
export const KNOWN_SCHEDULERS = [
  'aws_batch',
  'aws_sagemaker',
  'local_cwd',
  'slurm',
  'local_docker',
  'lsf',
  'kubernetes',
  'kubernetes_mcad',
] as const;

/** A scheduler name of {@link KNOWN_SCHEDULERS}. */
export type KnownScheduler = (typeof KNOWN_SCHEDULERS)[number];

/** The validated configuration of a function. */
export interface FunctionConfig {
  readonly tableName: string;
  readonly eventBusName?: string;
  readonly schedulers: readonly string[];
  readonly sessionName: string;
  readonly batchQueues: readonly string[];
  readonly dynamoDbEndpoint?: string;
  readonly localDataDir?: string;
  /** umask (0 to 0o777) local_cwd replicas run with: the local server's own before it tightened it. */
  readonly localReplicaUmask?: number;
  /** Days finished records are kept; the store's default (DEFAULT_RETENTION_DAYS of lib/store) when unset. */
  readonly retentionDays?: number;
  /** The slurm scheduler's slurmrestd and job settings. */
  readonly slurm: SlurmSettings;
  /** The cluster the kubernetes and kubernetes_mcad schedulers reach. */
  readonly kubernetes: KubernetesSettings;
  /**
   * Local mode: the environment of the server's own process (the user's shell), which local_docker's
   * `copy_env` copies from and whose DOCKER_HOST names the Docker daemon. Undefined in the deployed stack.
   */
  readonly localHostEnv?: Readonly<Record<string, string | undefined>>;
  /** The S3 bucket of workspace archives (the deployed stack's); undefined: none. */
  readonly workspaceBucket?: string;
  /** Days the workspace bucket keeps an archive (its lifecycle rule). */
  readonly workspaceDays: number;
}

/** The settings local mode gives the functions itself (its table, its embedded DynamoDB, its schedulers). */
export type LocalSettings = Pick<
  FunctionConfig,
  'tableName' | 'schedulers' | 'dynamoDbEndpoint' | 'localDataDir'
> &
  Required<Pick<FunctionConfig, 'localReplicaUmask'>>;

/**
 * A deployment mistake (not the caller's): the API answers 500 with only the request id, and the function's
 * log has this message.
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const SESSION = /^[A-Za-z0-9_.-]{1,64}$/;
const S3_BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Reads and checks the configuration from `env`; in local mode, `local` gives the settings the local server
 * fixes itself (the environment's values for them are not read).
 *
 * @throws ConfigError naming every bad variable, its value and what it accepts.
 */
export function readFunctionConfig(
  env: Readonly<Record<string, string | undefined>>,
  local?: LocalSettings,
): FunctionConfig {
  const problems: string[] = [];
  const tableName = local ? local.tableName : env[ENV.tableName];
  if (!tableName) problems.push(`${ENV.tableName} is not set (the DynamoDB table of app records)`);

  const listed = commaList(env[ENV.schedulers]);
  const schedulers = local ? [...local.schedulers] : listed.length > 0 ? listed : [...DEFAULT_SCHEDULERS];
  for (const name of schedulers)
    if (!(KNOWN_SCHEDULERS as readonly string[]).includes(name))
      problems.push(
        `${ENV.schedulers} names an unknown scheduler '${name}'; use ${KNOWN_SCHEDULERS.join(', ')}`,
      );

  const sessionName = env[ENV.sessionName] || DEFAULT_SESSION;
  if (!SESSION.test(sessionName))
    problems.push(`${ENV.sessionName}='${sessionName}' must be 1 to 64 letters, digits, '_', '.' or '-'`);

  const retentionRaw = env[ENV.retentionDays] || undefined;
  const retentionDays = retentionRaw === undefined ? undefined : Number(retentionRaw);
  if (retentionDays !== undefined && !(Number.isInteger(retentionDays) && retentionDays > 0))
    problems.push(`${ENV.retentionDays}='${retentionRaw}' must be a whole number of days, at least 1`);

  const workspaceBucket = env[ENV.workspaceBucket] || undefined;
  if (workspaceBucket !== undefined && !S3_BUCKET.test(workspaceBucket))
    problems.push(
      `${ENV.workspaceBucket}='${workspaceBucket}' is not an S3 bucket name (3 to 63 of a-z 0-9 . -)`,
    );
  const workspaceDaysRaw = env[ENV.workspaceDays];
  const workspaceDays =
    workspaceDaysRaw === undefined || workspaceDaysRaw === ''
      ? DEFAULT_WORKSPACE_DAYS
      : Number(workspaceDaysRaw);
  if (!(Number.isInteger(workspaceDays) && workspaceDays >= 2))
    problems.push(`${ENV.workspaceDays}='${workspaceDaysRaw}' must be a whole number of days, at least 2`);

  const dynamoDbEndpoint = (local ? local.dynamoDbEndpoint : env[ENV.dynamoDbEndpoint]) || undefined;
  if (dynamoDbEndpoint !== undefined && !URL.canParse(dynamoDbEndpoint))
    problems.push(`${ENV.dynamoDbEndpoint}='${dynamoDbEndpoint}' is not a URL (e.g. http://127.0.0.1:8000)`);

  const localDataDir = (local ? local.localDataDir : env[ENV.localDataDir]) || undefined;
  if (schedulers.includes('local_cwd') && localDataDir === undefined)
    problems.push(`${ENV.localDataDir} is not set; the local_cwd scheduler needs a data directory`);

  const slurm = readSlurmSettings(env, problems);
  const kubernetes = readKubernetesSettings(env, problems);

  if (problems.length > 0) throw new ConfigError(`Invalid function configuration: ${problems.join('; ')}`);
  const eventBusName = env[ENV.eventBusName] || undefined;
  return {
    tableName: tableName ?? '',
    schedulers,
    sessionName,
    batchQueues: commaList(env[ENV.batchQueues]),
    slurm,
    kubernetes,
    ...(retentionDays === undefined ? {} : { retentionDays }),
    workspaceDays,
    ...(workspaceBucket === undefined ? {} : { workspaceBucket }),
    ...(eventBusName === undefined ? {} : { eventBusName }),
    ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }),
    ...(localDataDir === undefined ? {} : { localDataDir }),
    ...(local ? { localReplicaUmask: local.localReplicaUmask, localHostEnv: { ...env } } : {}),
  };
}
