/**
 * Pure translation of an AppDef into AWS Batch requests: one multi-node `RegisterJobDefinition` input (one
 * node range per role) and one `SubmitJob` input. This follows TorchX's `AWSBatchScheduler._submit_dryrun`
 * field by field, adds the options TorchX lacked (ulimits, timeout, retry rules, propagate_tags, log_group),
 * and checks every AWS rule it can before anything is sent.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import type {
  ContainerProperties,
  Device,
  DeviceCgroupPermission,
  EvaluateOnExit,
  KeyValuePair,
  MountPoint,
  NodePropertyOverride,
  NodeRangeProperty,
  RegisterJobDefinitionCommandInput,
  ResourceRequirement,
  SubmitJobCommandInput,
  Volume,
} from '@aws-sdk/client-batch';
import {
  type AppDef,
  applyMacros,
  type DeviceMount,
  EFA_DEVICE,
  type FieldIssue,
  INSTANCE_TYPE_CAPABILITY,
  MISSING,
  type Mount,
  makeResource,
  makeUnique,
  NEURON_DEVICE,
  NONE,
  type Resource,
  type Role,
  ValidationError,
} from '../../specs/index.js';
import { JOB_NAME_PATTERN } from '../aws-names.js';
import { AppNotSupportedError } from '../errors.js';
import {
  type AwsBatchOpts,
  awsBatchOptionIssues,
  MAX_PRIORITY,
  MIN_TIMEOUT_SECONDS,
  parseRetryRules,
  parseUlimits,
} from './options.js';

/** The native request of `aws_batch`: exactly what `schedule` sends (see {@link translateApp}). */
export interface AwsBatchRequest {
  registerJobDefinition: RegisterJobDefinitionCommandInput;
  submitJob: SubmitJobCommandInput;
}

import { TORCHX_VERSION_TAG, TORCHX_VERSION_TAG_VALUE } from '../torchx-version.js';

export { JOB_NAME_PATTERN, TORCHX_VERSION_TAG, TORCHX_VERSION_TAG_VALUE };
/** Tag key holding the app's name (unsanitised). */
export const TORCHX_APP_NAME_TAG = 'torchx.pytorch.org/app-name';
/** Tag key holding the `user` run option. */
export const TORCHX_USER_TAG = 'torchx.pytorch.org/user';

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

/** Most node groups (roles) a multi-node job may have. */
export const MAX_NODE_GROUPS = 5;
/** Longest job or job definition name. */
export const MAX_NAME_LENGTH = 128;
/** Longest random suffix TorchX's `random_id` produces (plus its `-`). */
export const MAX_UNIQUE_SUFFIX_LENGTH = 15;
/** Batch quota: SubmitJob payload. */
export const MAX_SUBMIT_PAYLOAD_BYTES = 30 * 1024;
/** Batch quota: job definition size. */
export const MAX_JOB_DEFINITION_BYTES = 24 * 1024;
/** Most tags on a Batch job or job definition. */
export const MAX_TAGS = 50;
/** Longest Batch tag key. */
export const MAX_TAG_KEY_LENGTH = 128;
/** Longest Batch tag value. */
export const MAX_TAG_VALUE_LENGTH = 256;
/** Most attempts a Batch retry strategy allows (the least is 1). */
export const MAX_ATTEMPTS = 10;
/** Characters of the content hash in a shared job definition's name. */
export const DEFINITION_HASH_LENGTH = 12;

const NODE_GROUPS_MESSAGE =
  `AWS Batch only supports <= ${MAX_NODE_GROUPS} roles (NodeGroups). ` +
  'See: https://docs.aws.amazon.com/batch/latest/userguide/multi-node-parallel-jobs.html#mnp-node-groups';

/**
 * Turns `name` into a valid Batch name part of at most `maxLength` characters: bad characters become `-`,
 * leading non-alphanumerics are dropped, and `app` stands in for nothing.
 */
export function sanitizeName(name: string, maxLength: number): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, '-').replace(/^[^A-Za-z0-9]+/, '');
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
export function jobNamePrefix(appName: string, shareId: string | null): string {
  const raw = shareId === null ? appName : `${appName}-${shareId}`;
  return sanitizeName(raw, MAX_NAME_LENGTH - MAX_UNIQUE_SUFFIX_LENGTH);
}

/** Makes a unique job name from a prefix (TorchX `make_unique`); injectable so tests are deterministic. */
export type UniqueNamer = (prefix: string) => string;

/** TorchX's `make_unique`: `<prefix>-<random id>`. */
export const defaultUniqueNamer: UniqueNamer = (prefix) => makeUnique(prefix);

/** `r`, `w`, `m` → Batch device permissions, in string order (TorchX). */
function devicePermissions(permissions: string): DeviceCgroupPermission[] {
  const map: Record<string, DeviceCgroupPermission> = { r: 'READ', w: 'WRITE', m: 'MKNOD' };
  return [...permissions].flatMap((c) => (map[c] ? [map[c]] : []));
}

/**
 * Device mounts for a resource's devices (TorchX `get_device_mounts`): `vpc.amazonaws.com/efa: n` →
 * `/dev/infiniband/uverbs0..n-1`, `aws.amazon.com/neurondevice: n` → `/dev/neuron0..n-1`, in the order of the
 * devices map. Other names are rejected by {@link checkApp}.
 */
export function deviceMountsOf(devices: Readonly<Record<string, number>>): DeviceMount[] {
  const mounts: DeviceMount[] = [];
  for (const [name, count] of Object.entries(devices)) {
    const base = name === EFA_DEVICE ? '/dev/infiniband/uverbs' : name === NEURON_DEVICE ? '/dev/neuron' : '';
    if (base === '') continue;
    for (let i = 0; i < count; i++) {
      mounts.push({ type: 'device', srcPath: `${base}${i}`, dstPath: `${base}${i}`, permissions: 'rwm' });
    }
  }
  return mounts;
}

/**
 * Batch resource requirements of a Resource (TorchX `resource_requirements_from_resource`): VCPU (1 when
 * cpu <= 0), MEMORY in MiB as is, GPU only when > 0.
 *
 * @throws ValidationError with TorchX's message when memMB is not positive.
 */
export function resourceRequirementsOf(
  resource: Readonly<Resource>,
  path = 'resource',
): ResourceRequirement[] {
  if (!(resource.memMB > 0)) {
    throw ValidationError.forField(
      `${path}.memMB`,
      `AWSBatchScheduler requires memMB to be set to a positive value, got ${resource.memMB}`,
    );
  }
  const requirements: ResourceRequirement[] = [
    { type: 'VCPU', value: String(resource.cpu > 0 ? resource.cpu : 1) },
    { type: 'MEMORY', value: String(resource.memMB) },
  ];
  if (resource.gpu > 0) requirements.push({ type: 'GPU', value: String(resource.gpu) });
  return requirements;
}

/** A Resource from Batch resource requirements (TorchX `resource_from_resource_requirements`); gpu 0 if absent. */
export function resourceFromRequirements(requirements: readonly ResourceRequirement[]): Resource {
  const value = (type: string) =>
    Number.parseInt(requirements.find((r) => r.type === type)?.value ?? '0', 10);
  return makeResource({ cpu: value('VCPU'), gpu: value('GPU'), memMB: value('MEMORY') });
}

/**
 * Node range `targetNodes` → number of nodes (TorchX `_parse_num_replicas`): `a:b`, `:b` (from 0), `a:` (to
 * numNodes-1) or `a`.
 */
export function parseNumReplicas(targetNodes: string, numNodes: number): number {
  const range = nodeRangeOf(targetNodes, numNodes);
  return range.end - range.start + 1;
}

/** `targetNodes` → first and last node index. */
export function nodeRangeOf(targetNodes: string, numNodes: number): { start: number; end: number } {
  const [startText = '', endText] = targetNodes.split(':');
  const start = startText === '' ? 0 : Number.parseInt(startText, 10);
  if (endText === undefined) return { start, end: start };
  return { start, end: endText === '' ? numNodes - 1 : Number.parseInt(endText, 10) };
}

/**
 * One role as a Batch node range (TorchX `_role_to_node_properties`). `role` must already have its macros
 * applied and its TORCHX_ROLE_* env set; `startIdx` is the role's first node index.
 */
export function roleToNodeRangeProperty(
  role: Readonly<Role>,
  startIdx: number,
  cfg: Pick<AwsBatchOpts, 'privileged'> & Partial<AwsBatchOpts>,
  path = 'role',
): NodeRangeProperty {
  const mounts: Mount[] = [...role.mounts, ...deviceMountsOf(role.resource.devices)];
  const volumes: Volume[] = [];
  const mountPoints: MountPoint[] = [];
  const devices: Device[] = [];
  mounts.forEach((mount, i) => {
    const name = `mount_${i}`;
    switch (mount.type) {
      case 'bind':
        volumes.push({ name, host: { sourcePath: mount.srcPath } });
        mountPoints.push({ containerPath: mount.dstPath, readOnly: mount.readOnly, sourceVolume: name });
        break;
      case 'volume':
        volumes.push({ name, efsVolumeConfiguration: { fileSystemId: mount.src } });
        mountPoints.push({ containerPath: mount.dstPath, readOnly: mount.readOnly, sourceVolume: name });
        break;
      case 'device':
        devices.push({
          hostPath: mount.srcPath,
          containerPath: mount.dstPath,
          permissions: devicePermissions(mount.permissions),
        });
        break;
    }
  });
  const environment: KeyValuePair[] = Object.entries(role.env).map(([name, value]) => ({ name, value }));
  const container: ContainerProperties = {
    command: [role.entrypoint, ...role.args],
    image: role.image,
    environment,
    privileged: cfg.privileged,
    resourceRequirements: resourceRequirementsOf(role.resource, `${path}.resource`),
    linuxParameters: { sharedMemorySize: role.resource.memMB, devices },
    logConfiguration: cfg.log_group
      ? { logDriver: 'awslogs', options: { 'awslogs-group': cfg.log_group } }
      : { logDriver: 'awslogs' },
    mountPoints,
    volumes,
  };
  if (cfg.ulimits) container.ulimits = parseUlimits(cfg.ulimits);
  if (cfg.job_role_arn) container.jobRoleArn = cfg.job_role_arn;
  if (cfg.execution_role_arn) container.executionRoleArn = cfg.execution_role_arn;
  const instanceType = role.resource.capabilities[INSTANCE_TYPE_CAPABILITY];
  if (role.numReplicas > 0 && instanceType !== undefined && instanceType !== '') {
    container.instanceType = String(instanceType);
  }
  return { targetNodes: `${startIdx}:${startIdx + role.numReplicas - 1}`, container };
}

/** Canonical JSON (object keys sorted) so equal content always hashes the same. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The first 12 hex characters of the SHA-256 of a job definition's content (everything but its name).
 *
 * @example
 * ```ts
 * definitionHash(request.registerJobDefinition); // e.g. '3f2a9c0d11be'
 * ```
 */
export function definitionHash(definition: Readonly<RegisterJobDefinitionCommandInput>): string {
  const { jobDefinitionName: _name, ...content } = definition;
  return hashOfCanonical(canonicalJson(content));
}

function hashOfCanonical(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex').slice(0, DEFINITION_HASH_LENGTH);
}

/**
 * True when a request's job definition can be shared between runs: it does not embed the run's job name
 * (through `${app_id}`), so it is named by content hash and reused. Otherwise it is named after the job.
 */
export function isSharedDefinition(request: Readonly<AwsBatchRequest>): boolean {
  return request.registerJobDefinition.jobDefinitionName !== request.submitJob.jobName;
}

const PLACEHOLDER_IMAGES = new Set(['', NONE, MISSING]);

/**
 * Checks the app and options against what AWS Batch accepts, collecting every problem. Called by
 * {@link translateApp} (so a translation is never produced from bad input) and by `validate`.
 *
 * @throws AppNotSupportedError for more than five roles (TorchX's message); ValidationError naming each
 *   offending field otherwise.
 */
export function checkApp(
  app: Readonly<AppDef>,
  cfg: Readonly<AwsBatchOpts>,
  stackTags: Readonly<Record<string, string>> = {},
): void {
  if (app.roles.length > MAX_NODE_GROUPS) {
    throw new AppNotSupportedError(NODE_GROUPS_MESSAGE, [
      { path: 'app.roles', message: NODE_GROUPS_MESSAGE },
    ]);
  }
  const issues: FieldIssue[] = [];
  const add = (path: string, message: string) => issues.push({ path, message });
  if (app.roles.length === 0) add('app.roles', 'the app has no roles; give at least one');
  app.roles.forEach((role, i) => {
    const path = `app.roles.${i}`;
    const { resource } = role;
    if (!Number.isInteger(role.numReplicas) || role.numReplicas < 1) {
      add(`${path}.numReplicas`, `must be a whole number of at least 1, got ${role.numReplicas}`);
    }
    if (!Number.isInteger(role.maxRetries) || role.maxRetries < 0 || role.maxRetries > MAX_ATTEMPTS) {
      add(
        `${path}.maxRetries`,
        `must be 0 to ${MAX_ATTEMPTS} on AWS Batch (it sets retryStrategy.attempts, 1 to ${MAX_ATTEMPTS}), got ${role.maxRetries}`,
      );
    }
    if (PLACEHOLDER_IMAGES.has(role.image)) {
      add(
        `${path}.image`,
        'AWS Batch runs containers; give a container image (e.g. ghcr.io/pytorch/torchx:0.8.0dev0)',
      );
    } else if (role.image.startsWith('sha256:') && !cfg.image_repo) {
      add(
        `${path}.image`,
        `must specify the image repository via \`image_repo\` config to be able to upload local image ${role.image}; ` +
          'push the image to a registry (or set image_repo to where you pushed it)',
      );
    }
    if (!(resource.memMB > 0)) {
      add(
        `${path}.resource.memMB`,
        `AWSBatchScheduler requires memMB to be set to a positive value, got ${resource.memMB}`,
      );
    } else if (!Number.isInteger(resource.memMB)) {
      add(`${path}.resource.memMB`, `must be a whole number of MiB, got ${resource.memMB}`);
    }
    if (resource.cpu > 0 && !Number.isInteger(resource.cpu)) {
      add(
        `${path}.resource.cpu`,
        `multi-node Batch jobs run on EC2 and need whole vCPUs, got ${resource.cpu}`,
      );
    }
    if (resource.gpu > 0 && !Number.isInteger(resource.gpu)) {
      add(`${path}.resource.gpu`, `must be a whole number of GPUs, got ${resource.gpu}`);
    }
    for (const [device, count] of Object.entries(resource.devices)) {
      if (device !== EFA_DEVICE && device !== NEURON_DEVICE) {
        add(
          `${path}.resource.devices.${device}`,
          `unknown device '${device}'; AWS Batch supports ${EFA_DEVICE} and ${NEURON_DEVICE}`,
        );
      } else if (!Number.isInteger(count) || count < 0) {
        add(`${path}.resource.devices.${device}`, `must be a whole number of devices, got ${count}`);
      }
    }
    for (const name of Object.keys(role.env)) {
      if (name.startsWith('AWS_BATCH')) {
        add(
          `${path}.env.${name}`,
          'names starting with AWS_BATCH are reserved by AWS Batch; rename the variable',
        );
      }
    }
  });
  if (cfg.priority < 0 || cfg.priority > MAX_PRIORITY) {
    add('cfg.priority', `must be 0 to ${MAX_PRIORITY}, got ${cfg.priority}`);
  }
  if (cfg.timeout !== null && cfg.timeout < MIN_TIMEOUT_SECONDS) {
    add('cfg.timeout', `must be at least ${MIN_TIMEOUT_SECONDS} seconds, got ${cfg.timeout}`);
  }
  issues.push(...awsBatchOptionIssues(cfg));
  for (const [key, value] of Object.entries(app.metadata)) {
    if (key.length < 1 || key.length > MAX_TAG_KEY_LENGTH) {
      add(`app.metadata.${key}`, `becomes a tag; tag keys must have 1 to ${MAX_TAG_KEY_LENGTH} characters`);
    } else if (key.toLowerCase().startsWith('aws:')) {
      add(`app.metadata.${key}`, 'becomes a tag; keys starting with aws: are reserved by AWS');
    }
    if (value.length > MAX_TAG_VALUE_LENGTH) {
      add(
        `app.metadata.${key}`,
        `becomes a tag; tag values must have at most ${MAX_TAG_VALUE_LENGTH} characters`,
      );
    }
  }
  if (app.name.length > MAX_TAG_VALUE_LENGTH) {
    add('app.name', `is the ${TORCHX_APP_NAME_TAG} tag; use at most ${MAX_TAG_VALUE_LENGTH} characters`);
  }
  if (cfg.user.length > MAX_TAG_VALUE_LENGTH) {
    add('cfg.user', `is the ${TORCHX_USER_TAG} tag; use at most ${MAX_TAG_VALUE_LENGTH} characters`);
  }
  const tagKeys = new Set([
    TORCHX_VERSION_TAG,
    TORCHX_APP_NAME_TAG,
    TORCHX_USER_TAG,
    ...Object.keys(app.metadata),
    ...Object.keys(stackTags),
  ]);
  if (tagKeys.size > MAX_TAGS) {
    add('app.metadata', `makes ${tagKeys.size} tags with TorchX's three; AWS Batch allows ${MAX_TAGS}`);
  }
  const parse = (path: string, fn: () => void) => {
    try {
      fn();
    } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      issues.push(...(e.issues.length > 0 ? e.issues : [{ path, message: e.message }]));
    }
  };
  if (cfg.ulimits) parse('cfg.ulimits', () => parseUlimits(cfg.ulimits ?? {}));
  if (cfg.retry_rules) parse('cfg.retry_rules', () => parseRetryRules(cfg.retry_rules ?? []));
  if (issues.length > 0) {
    const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    throw new ValidationError(`The app cannot run on AWS Batch: ${summary}`, issues);
  }
}

/** The app with local images (`sha256:…`) rewritten to `<image_repo>:<hash>` (TorchX `dryrun_push_images`). */
function withPushedImages(app: Readonly<AppDef>, imageRepo: string | null): AppDef {
  // Nothing to rewrite: the app itself (translation never mutates it), as TorchX's dry run keeps it.
  if (!imageRepo || !app.roles.some((role) => role.image.startsWith('sha256:'))) return app as AppDef;
  const copy = structuredClone(app) as AppDef;
  for (const role of copy.roles) {
    if (imageRepo && role.image.startsWith('sha256:')) {
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
 *   every other tag, so app metadata cannot override them; none outside a stack, so dry runs match TorchX.
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
): Translation {
  checkApp(app, cfg, stackTags);
  const submitted = withPushedImages(app, cfg.image_repo);
  const shareId = cfg.share_id;
  const prefix = jobNamePrefix(app.name, shareId);
  const jobName = uniqueNamer(prefix);
  if (!JOB_NAME_PATTERN.test(jobName)) {
    throw new TypeError(`uniqueNamer returned '${jobName}', which is not a valid Batch job name`);
  }
  const nodeRangeProperties: NodeRangeProperty[] = [];
  let nodeIdx = 0;
  submitted.roles.forEach((role, roleIdx) => {
    const resolved = applyMacros(role, {
      imgRoot: '',
      appId: jobName,
      replicaId: NODE_INDEX_EXPRESSION,
      rank0Env: MAIN_NODE_ADDRESS_ENV,
    });
    resolved.env[ROLE_IDX_ENV] = String(roleIdx);
    resolved.env[ROLE_NAME_ENV] = role.name;
    nodeRangeProperties.push(roleToNodeRangeProperty(resolved, nodeIdx, cfg, `app.roles.${roleIdx}`));
    nodeIdx += role.numReplicas;
  });
  const evaluateOnExit: EvaluateOnExit[] = [
    { onExitCode: '0', action: 'EXIT' },
    ...(cfg.retry_rules ? parseRetryRules(cfg.retry_rules) : []),
  ];
  const tags: Record<string, string> = {
    [TORCHX_VERSION_TAG]: TORCHX_VERSION_TAG_VALUE,
    [TORCHX_APP_NAME_TAG]: app.name,
    [TORCHX_USER_TAG]: cfg.user,
    ...app.metadata,
    ...stackTags,
  };
  const definition: RegisterJobDefinitionCommandInput = {
    jobDefinitionName: jobName,
    type: 'multinode',
    nodeProperties: { numNodes: nodeIdx, mainNode: 0, nodeRangeProperties },
    retryStrategy: {
      attempts: Math.max(...submitted.roles.map((r) => r.maxRetries), 1),
      evaluateOnExit,
    },
    tags,
  };
  if (shareId !== null) definition.schedulingPriority = cfg.priority;
  const shared = shareDefinition(definition, jobName, app.name);
  const submitJob: SubmitJobCommandInput = {
    jobName,
    jobQueue: cfg.queue,
    jobDefinition: shared?.definition.jobDefinitionName ?? jobName,
    tags: { ...tags },
  };
  if (shareId !== null) submitJob.shareIdentifier = shareId;
  if (cfg.timeout !== null) submitJob.timeout = { attemptDurationSeconds: cfg.timeout };
  if (cfg.propagate_tags) submitJob.propagateTags = true;
  if (shared && shared.overrides.length > 0) {
    submitJob.nodeOverrides = { nodePropertyOverrides: shared.overrides };
  }
  const registerJobDefinition = shared?.definition ?? definition;
  // With `worstCaseSizes`, sized as if the unique suffix had its longest length (what `validate` checks), so
  // one translation serves both the checks and the request.
  const extra = worstCaseSizes ? MAX_UNIQUE_SUFFIX_LENGTH - (jobName.length - prefix.length) : 0;
  checkSizes(registerJobDefinition, submitJob, jobName, extra);
  return { request: { registerJobDefinition, submitJob }, app: submitted };
}

/**
 * Makes a run-independent job definition when possible: env values that embed the job name (e.g. the
 * runner's `TORCHX_JOB_ID`) move to SubmitJob node overrides; if nothing else embeds the job name, the rest
 * is named `<app>-<content hash>` and can be shared between runs. Undefined when the definition embeds the job
 * name elsewhere (a command with `${app_id}`): it is then per-run and named after the job, as in TorchX.
 */
function shareDefinition(
  definition: RegisterJobDefinitionCommandInput,
  jobName: string,
  appName: string,
): { definition: RegisterJobDefinitionCommandInput; overrides: NodePropertyOverride[] } | undefined {
  // Copies only along the path to each container's environment: the rest is shared with `definition`, which
  // the caller drops when a shared definition comes back, and neither is changed afterwards.
  const overrides: NodePropertyOverride[] = [];
  const nodeProperties = definition.nodeProperties;
  const ranges = (nodeProperties?.nodeRangeProperties ?? []).map((range) => {
    const container = range.container;
    if (container === undefined) return range;
    const environment = container.environment ?? [];
    const perRun = environment.filter((pair) => (pair.value ?? '').includes(jobName));
    if (perRun.length === 0) return range;
    overrides.push({ targetNodes: range.targetNodes, containerOverrides: { environment: perRun } });
    return {
      ...range,
      container: { ...container, environment: environment.filter((p) => !perRun.includes(p)) },
    };
  });
  const { jobDefinitionName: _ownName, ...content } = definition;
  if (nodeProperties !== undefined)
    content.nodeProperties = { ...nodeProperties, nodeRangeProperties: ranges };
  if (JSON.stringify(content).includes(jobName)) return undefined;
  const base = sanitizeName(appName, MAX_NAME_LENGTH - DEFINITION_HASH_LENGTH - 1);
  return {
    definition: { jobDefinitionName: `${base}-${hashOfCanonical(canonicalJson(content))}`, ...content },
    overrides,
  };
}

/** UTF-8 bytes of a request's JSON with each occurrence of `jobName` counted `extra` bytes longer. */
function worstCaseBytes(value: unknown, jobName: string, extra: number): number {
  const json = JSON.stringify(value);
  const occurrences = extra > 0 ? json.split(jobName).length - 1 : 0;
  return Buffer.byteLength(json, 'utf8') + occurrences * extra;
}

function checkSizes(
  definition: RegisterJobDefinitionCommandInput,
  submitJob: SubmitJobCommandInput,
  jobName: string,
  extra: number,
): void {
  const issues: FieldIssue[] = [];
  const definitionBytes = worstCaseBytes(definition, jobName, extra);
  if (definitionBytes > MAX_JOB_DEFINITION_BYTES) {
    issues.push({
      path: 'app',
      message:
        `the job definition is ${definitionBytes} bytes; AWS Batch allows ${MAX_JOB_DEFINITION_BYTES} (24 KiB). ` +
        'Shorten args and env (e.g. move configuration into a file in the image or on S3)',
    });
  }
  const submitBytes = worstCaseBytes(submitJob, jobName, extra);
  if (submitBytes > MAX_SUBMIT_PAYLOAD_BYTES) {
    issues.push({
      path: 'app',
      message:
        `the SubmitJob payload is ${submitBytes} bytes; AWS Batch allows ${MAX_SUBMIT_PAYLOAD_BYTES} (30 KiB). ` +
        'Use fewer or shorter tags (app metadata) and env values',
    });
  }
  if (issues.length > 0) {
    throw new ValidationError(
      `The app cannot run on AWS Batch: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      issues,
    );
  }
}
