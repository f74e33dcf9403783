/**
 * Pure translation of an AppDef into AWS Batch requests: one multi-node `RegisterJobDefinition` input (one
 * node range per role) and one `SubmitJob` input. This follows TorchX's `AWSBatchScheduler._submit_dryrun`
 * field by field, adds the options TorchX lacked (ulimits, timeout, retry rules, propagate_tags, log_group),
 * and checks every AWS rule it can before anything is sent (`checks.ts`).
 *
 * A dry run builds each request object once, straight from the app (no intermediate copies of the roles),
 * and writes the job definition's content out once, in canonical form: that one text tells whether the
 * definition embeds the job name and gives its content hash.
 *
 * @module
 */

import { hash } from 'node:crypto';
import type {
  ContainerProperties,
  EvaluateOnExit,
  KeyValuePair,
  NodePropertyOverride,
  NodeRangeProperty,
  RegisterJobDefinitionCommandInput,
  SubmitJobCommandInput,
} from '@aws-sdk/client-batch';
import {
  type AppDef,
  canonicalJson,
  cloneAppDef,
  macroMapping,
  makeUnique,
  type Role,
  safeSubstitute,
} from '../../specs/index.js';
import { JOB_NAME_PATTERN } from '../aws-names.js';
import { TORCHX_VERSION_TAG, TORCHX_VERSION_TAG_VALUE } from '../torchx-version.js';
import { checkApp, checkSizes, TORCHX_APP_NAME_TAG, TORCHX_USER_TAG } from './checks.js';
import { containerOf, containerSettingsOf } from './container.js';
import { type AwsBatchOpts, parseRetryRules } from './options.js';
import {
  type BatchWorkspace,
  checkWorkspaceJobRole,
  workspaceEnvironmentOverride,
  workspaceNodeRange,
} from './workspace.js';

/** The native request of `aws_batch`: exactly what `schedule` sends (see {@link translateApp}). */
export interface AwsBatchRequest {
  registerJobDefinition: RegisterJobDefinitionCommandInput;
  submitJob: SubmitJobCommandInput;
}

export { JOB_NAME_PATTERN, TORCHX_VERSION_TAG, TORCHX_VERSION_TAG_VALUE };

/** Env var the scheduler adds to every role: the role's index in the app. */
export const ROLE_IDX_ENV = 'TORCHX_ROLE_IDX';
/** Env var the scheduler adds to every role: the role's name (describe reads roles back from it). */
export const ROLE_NAME_ENV = 'TORCHX_ROLE_NAME';

/** Batch's node-index variable (the value of the `replica_id` macro; a shell expands it). */
export const NODE_INDEX_EXPRESSION = '$AWS_BATCH_JOB_NODE_INDEX';
/** The variable holding the main node's address (the value of the `rank0_env` macro). */
export const MAIN_NODE_ADDRESS_ENV = 'AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS';

/** Batch's default log group. */
export const DEFAULT_LOG_GROUP = '/aws/batch/job';

/** Longest job or job definition name. */
export const MAX_NAME_LENGTH = 128;
/** Longest random suffix TorchX's `random_id` produces (plus its `-`). */
export const MAX_UNIQUE_SUFFIX_LENGTH = 15;
/** Characters of the content hash in a shared job definition's name. */
export const DEFINITION_HASH_LENGTH = 12;

/** A name {@link sanitizeName} leaves as it is (before cutting it to length). */
const CLEAN_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * Turns `name` into a valid Batch name part of at most `maxLength` characters: bad characters become `-`,
 * leading non-alphanumerics are dropped, and `app` stands in for nothing.
 */
export function sanitizeName(name: string, maxLength: number): string {
  const cleaned = CLEAN_NAME_PATTERN.test(name)
    ? name
    : name.replace(/[^A-Za-z0-9_-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
  const truncated = cleaned.slice(0, maxLength);
  return truncated.length > 0 ? truncated : 'app';
}

/**
 * The prefix of a job name: the app name (with `-<share_id>` when set, as TorchX), sanitised for Batch
 * (characters outside `[A-Za-z0-9_-]` become `-`, leading non-alphanumerics are dropped, `app` if nothing is
 * left) and cut so that the random suffix still fits in 128 characters.
 *
 * @example
 * ```ts
 * jobNamePrefix('exp/train.v2', null); // 'exp-train-v2'
 * ```
 */
export function jobNamePrefix(appName: string, shareId: string | null, reserved = 0): string {
  const raw = shareId === null ? appName : `${appName}-${shareId}`;
  return sanitizeName(raw, MAX_NAME_LENGTH - MAX_UNIQUE_SUFFIX_LENGTH - reserved);
}

/** Makes a unique job name from a prefix (TorchX `make_unique`); injectable so tests are deterministic. */
export type UniqueNamer = (prefix: string) => string;

/** TorchX's `make_unique`: `<prefix>-<random id>`. */
export const defaultUniqueNamer: UniqueNamer = (prefix) => makeUnique(prefix);

/**
 * The first 12 hex characters of the SHA-256 of a job definition's content (everything but its name) in
 * canonical JSON (keys sorted).
 *
 * @example
 * ```ts
 * definitionHash(request.registerJobDefinition); // e.g. '3f2a9c0d11be'
 * ```
 */
export function definitionHash(definition: Readonly<RegisterJobDefinitionCommandInput>): string {
  return contentHash(definitionContentJson(definition));
}

/** The first {@link DEFINITION_HASH_LENGTH} hex characters of the SHA-256 of `content` (UTF-8). */
function contentHash(content: string): string {
  return hash('sha256', content, 'hex').slice(0, DEFINITION_HASH_LENGTH);
}

/** The canonical JSON of a job definition's content (everything but its name). */
function definitionContentJson(definition: Readonly<RegisterJobDefinitionCommandInput>): string {
  return canonicalJson({ ...definition, jobDefinitionName: undefined });
}

/**
 * True when a request's job definition can be shared between runs: it does not embed the run's job name
 * (through `${app_id}`), so it is named by content hash and reused. Otherwise it is named after the job.
 */
export function isSharedDefinition(request: Readonly<AwsBatchRequest>): boolean {
  return request.registerJobDefinition.jobDefinitionName !== request.submitJob.jobName;
}

/** The app with local images (`sha256:…`) rewritten to `<image_repo>:<hash>` (TorchX `dryrun_push_images`). */
function withPushedImages(app: Readonly<AppDef>, imageRepo: string | null): AppDef {
  // Nothing to rewrite: the app itself (translation never mutates it), as TorchX's dry run keeps it.
  if (!imageRepo || !app.roles.some((role) => role.image.startsWith('sha256:'))) return app as AppDef;
  const copy = cloneAppDef(app);
  for (const role of copy.roles) {
    if (role.image.startsWith('sha256:')) {
      role.image = `${imageRepo}:${role.image.slice('sha256:'.length)}`;
    }
  }
  return copy;
}

/** What {@link translateApp} returns: the request and the app as submitted. */
export interface Translation {
  request: AwsBatchRequest;
  /** The app after image rewriting (macros are applied to the request only). */
  app: AppDef;
}

/**
 * The environment of a role's container: its env with macros substituted (values only), then
 * `TORCHX_ROLE_IDX` and `TORCHX_ROLE_NAME` (in place when the role sets them itself), in the order a JS
 * object of those keys lists them.
 */
function environmentOf(
  role: Readonly<Role>,
  roleIdx: number,
  macros: Readonly<Record<string, string>>,
): KeyValuePair[] {
  const environment: KeyValuePair[] = [];
  let hasIdx = false;
  let hasName = false;
  for (const name of Object.keys(role.env)) {
    let value: string;
    if (name === ROLE_IDX_ENV) {
      value = String(roleIdx);
      hasIdx = true;
    } else if (name === ROLE_NAME_ENV) {
      value = role.name;
      hasName = true;
    } else {
      value = safeSubstitute(role.env[name] as string, macros);
    }
    environment.push({ name, value });
  }
  if (!hasIdx) environment.push({ name: ROLE_IDX_ENV, value: String(roleIdx) });
  if (!hasName) environment.push({ name: ROLE_NAME_ENV, value: role.name });
  return environment;
}

/**
 * The command of a role's container: its entrypoint, then its args with macros substituted.
 */
function commandOf(role: Readonly<Role>, macros: Readonly<Record<string, string>>): string[] {
  const command = new Array<string>(role.args.length + 1);
  command[0] = role.entrypoint;
  for (let i = 0; i < role.args.length; i++) command[i + 1] = safeSubstitute(role.args[i] as string, macros);
  return command;
}

/**
 * A container whose env values naming the job moved to a SubmitJob node override (so the definition can be
 * shared), with the environment it had before (restored if the definition turns out to be per-run).
 */
interface MovedEnvironment {
  container: Pick<ContainerProperties, 'environment'>;
  environment: KeyValuePair[];
}

/**
 * Translates an app (TorchX `_submit_dryrun`):
 * - job name `<sanitised app name>[-<share_id>]-<random id>` ({@link jobNamePrefix}, `uniqueNamer`);
 * - a `multinode` job definition, one node range per role (`targetNodes` `start:end`), macros `img_root`
 *   → `''`, `app_id` → the job name, `replica_id` → `$AWS_BATCH_JOB_NODE_INDEX`, `rank0_env` →
 *   `AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS`, env `TORCHX_ROLE_IDX`/`TORCHX_ROLE_NAME`;
 * - `retryStrategy.attempts = max(maxRetries over roles, 1)` with the "exit code 0 → EXIT" rule, then the
 *   `retry_rules`; TorchX's tags plus app metadata; `schedulingPriority` only with a share id;
 * - a definition whose command (or anything but env values) embeds the job name is per-run and named after
 *   the job, as in TorchX; otherwise env values holding the job name (the runner's `TORCHX_JOB_ID`) move to
 *   SubmitJob `nodeOverrides` and the definition is named `<app>-<content hash>`, so runs share it;
 * - SubmitJob carries the tags, the share id, `timeout` and `propagateTags`;
 * - `stackTags` (a deployed stack's `torchx-serverless:stack` tag) go on the definition and the job after
 *   every other tag, so app metadata cannot override them; none outside a stack, so dry runs match TorchX;
 * - `namePrefix` (a deployed stack's name and `_`, see the functions' `batchNamePrefix`) starts the job name and so every job definition
 *   name, so the stack's IAM can scope RegisterJobDefinition and SubmitJob to `job-definition/<prefix>*`;
 *   empty outside a stack;
 * - with a `workspace`, each node range is an `ecsProperties` task that fetches the archive before the role's
 *   container starts in it (see {@link workspaceNodeRange}); the job role is then required. Without one, the
 *   request is TorchX's.
 *
 * @param worstCaseSizes check the size quotas as if the unique suffix had its longest length.
 * @throws ValidationError (see {@link checkApp}) and when a request exceeds Batch's size quotas.
 */
export function translateApp(
  app: Readonly<AppDef>,
  cfg: Readonly<AwsBatchOpts>,
  uniqueNamer: UniqueNamer = defaultUniqueNamer,
  stackTags: Readonly<Record<string, string>> = {},
  worstCaseSizes = false,
  namePrefix = '',
  workspace?: Readonly<BatchWorkspace>,
): Translation {
  checkApp(app, cfg, stackTags);
  if (workspace !== undefined) checkWorkspaceJobRole(cfg.job_role_arn, workspace.archive);
  const submitted = withPushedImages(app, cfg.image_repo);
  const shareId = cfg.share_id;
  const prefix = namePrefix + jobNamePrefix(app.name, shareId, namePrefix.length);
  const jobName = uniqueNamer(prefix);
  if (!JOB_NAME_PATTERN.test(jobName)) {
    throw new TypeError(`uniqueNamer returned '${jobName}', which is not a valid Batch job name`);
  }
  const macros = macroMapping({
    imgRoot: '',
    appId: jobName,
    replicaId: NODE_INDEX_EXPRESSION,
    rank0Env: MAIN_NODE_ADDRESS_ENV,
  });
  const settings = containerSettingsOf(cfg);
  const nodeRangeProperties: NodeRangeProperty[] = [];
  // Env values holding the job name (e.g. the runner's TORCHX_JOB_ID) go to SubmitJob node overrides, so the
  // definition stays run-independent unless something else embeds the job name.
  const overrides: NodePropertyOverride[] = [];
  const moved: MovedEnvironment[] = [];
  let nodeIdx = 0;
  let attempts = 1;
  let commandEmbedsJobName = false;
  for (let roleIdx = 0; roleIdx < submitted.roles.length; roleIdx++) {
    const role = submitted.roles[roleIdx] as Role;
    const targetNodes = `${nodeIdx}:${nodeIdx + role.numReplicas - 1}`;
    const environment = environmentOf(role, roleIdx, macros);
    const kept = environment.filter((pair) => !(pair.value ?? '').includes(jobName));
    const command = commandOf(role, macros);
    if (!commandEmbedsJobName) commandEmbedsJobName = command.some((arg) => arg.includes(jobName));
    const container = containerOf(role, command, kept, settings, `app.roles.${roleIdx}`);
    const inWorkspace =
      workspace === undefined ? undefined : workspaceNodeRange(targetNodes, container, workspace);
    if (kept.length < environment.length) {
      const perRun = environment.filter((pair) => !kept.includes(pair));
      overrides.push(
        inWorkspace === undefined
          ? { targetNodes, containerOverrides: { environment: perRun } }
          : workspaceEnvironmentOverride(targetNodes, perRun),
      );
      moved.push({ container: inWorkspace?.main ?? container, environment });
    }
    nodeRangeProperties.push(inWorkspace?.range ?? { targetNodes, container });
    nodeIdx += role.numReplicas;
    if (role.maxRetries > attempts) attempts = role.maxRetries;
  }
  const evaluateOnExit: EvaluateOnExit[] = [{ onExitCode: '0', action: 'EXIT' }];
  if (cfg.retry_rules) evaluateOnExit.push(...parseRetryRules(cfg.retry_rules));
  const tags: Record<string, string> = {
    [TORCHX_VERSION_TAG]: TORCHX_VERSION_TAG_VALUE,
    [TORCHX_APP_NAME_TAG]: app.name,
    [TORCHX_USER_TAG]: cfg.user,
    ...app.metadata,
    ...stackTags,
  };
  const definition: RegisterJobDefinitionCommandInput = {
    jobDefinitionName: '', // named below: after the job, or by content hash
    type: 'multinode',
    nodeProperties: { numNodes: nodeIdx, mainNode: 0, nodeRangeProperties },
    retryStrategy: { attempts, evaluateOnExit },
    tags,
  };
  if (shareId !== null) definition.schedulingPriority = cfg.priority;

  // With `worstCaseSizes`, sized as if the unique suffix had its longest length (what `validate` checks), so
  // one translation serves both the checks and the request.
  const extra = worstCaseSizes ? MAX_UNIQUE_SUFFIX_LENGTH - (jobName.length - prefix.length) : 0;
  // Does anything but the moved env values hold the job name (a command with `${app_id}`)? Then the
  // definition is the run's own, named after the job with every env value in place (as TorchX); else it is
  // named by the hash of its canonical content. A command is checked first; the canonical text settles the
  // rest (and gives the hash).
  const content = commandEmbedsJobName ? undefined : definitionContentJson(definition);
  const shared = content !== undefined && !content.includes(jobName);
  if (shared) {
    const base =
      namePrefix + sanitizeName(app.name, MAX_NAME_LENGTH - DEFINITION_HASH_LENGTH - 1 - namePrefix.length);
    definition.jobDefinitionName = `${base}-${contentHash(content)}`;
  } else {
    definition.jobDefinitionName = jobName;
    for (const { container, environment } of moved) container.environment = environment;
  }
  const submitJob: SubmitJobCommandInput = {
    jobName,
    jobQueue: cfg.queue,
    jobDefinition: definition.jobDefinitionName,
    tags: { ...tags },
  };
  if (shareId !== null) submitJob.shareIdentifier = shareId;
  if (cfg.timeout !== null) submitJob.timeout = { attemptDurationSeconds: cfg.timeout };
  if (cfg.propagate_tags) submitJob.propagateTags = true;
  if (shared && overrides.length > 0) submitJob.nodeOverrides = { nodePropertyOverrides: overrides };
  checkSizes(definition, submitJob, jobName, extra);
  return { request: { registerJobDefinition: definition, submitJob }, app: submitted };
}
