/**
 * What AWS Batch accepts, checked before anything is sent: the app and options ({@link checkApp}) and the
 * size quotas of the translated requests ({@link checkSizes}). Every problem is collected so one error names
 * every field to fix.
 *
 * @module
 */

import type { RegisterJobDefinitionCommandInput, SubmitJobCommandInput } from '@aws-sdk/client-batch';
import {
  type AppDef,
  EFA_DEVICE,
  type FieldIssue,
  MISSING,
  NEURON_DEVICE,
  NONE,
  ValidationError,
} from '../../specs/index.js';
import { AppNotSupportedError } from '../errors.js';
import { TORCHX_VERSION_TAG } from '../torchx-version.js';
import {
  type AwsBatchOpts,
  awsBatchOptionIssues,
  MAX_PRIORITY,
  MIN_TIMEOUT_SECONDS,
  parseRetryRules,
  parseUlimits,
} from './options.js';

/** Tag key holding the app's name (unsanitised). */
export const TORCHX_APP_NAME_TAG = 'torchx.pytorch.org/app-name';
/** Tag key holding the `user` run option. */
export const TORCHX_USER_TAG = 'torchx.pytorch.org/user';

/** Most node groups (roles) a multi-node job may have. */
export const MAX_NODE_GROUPS = 5;
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

const NODE_GROUPS_MESSAGE =
  `AWS Batch only supports <= ${MAX_NODE_GROUPS} roles (NodeGroups). ` +
  'See: https://docs.aws.amazon.com/batch/latest/userguide/multi-node-parallel-jobs.html#mnp-node-groups';

const PLACEHOLDER_IMAGES = new Set(['', NONE, MISSING]);

/** Keys with at least one own enumerable property. */
function hasKeys(value: object): boolean {
  for (const _ in value) if (Object.hasOwn(value, _)) return true;
  return false;
}

/** The `cfg.ulimits` / `cfg.retry_rules` parser's issues (a parse that passes adds none). */
function parseIssues(path: string, parse: () => unknown): FieldIssue[] {
  try {
    parse();
    return [];
  } catch (e) {
    if (!(e instanceof ValidationError)) throw e;
    return e.issues.length > 0 ? [...e.issues] : [{ path, message: e.message }];
  }
}

function roleIssues(app: Readonly<AppDef>, cfg: Readonly<AwsBatchOpts>, issues: FieldIssue[]): void {
  for (let i = 0; i < app.roles.length; i++) {
    const role = app.roles[i] as AppDef['roles'][number];
    const path = `app.roles.${i}`;
    const { resource } = role;
    if (!Number.isInteger(role.numReplicas) || role.numReplicas < 1) {
      issues.push({
        path: `${path}.numReplicas`,
        message: `must be a whole number of at least 1, got ${role.numReplicas}`,
      });
    }
    if (!Number.isInteger(role.maxRetries) || role.maxRetries < 0 || role.maxRetries > MAX_ATTEMPTS) {
      issues.push({
        path: `${path}.maxRetries`,
        message: `must be 0 to ${MAX_ATTEMPTS} on AWS Batch (it sets retryStrategy.attempts, 1 to ${MAX_ATTEMPTS}), got ${role.maxRetries}`,
      });
    }
    if (PLACEHOLDER_IMAGES.has(role.image)) {
      issues.push({
        path: `${path}.image`,
        message: 'AWS Batch runs containers; give a container image (e.g. ghcr.io/pytorch/torchx:0.8.0dev0)',
      });
    } else if (role.image.startsWith('sha256:') && !cfg.image_repo) {
      issues.push({
        path: `${path}.image`,
        message:
          `must specify the image repository via \`image_repo\` config to be able to upload local image ${role.image}; ` +
          'push the image to a registry (or set image_repo to where you pushed it)',
      });
    }
    if (!(resource.memMB > 0)) {
      issues.push({
        path: `${path}.resource.memMB`,
        message: `AWSBatchScheduler requires memMB to be set to a positive value, got ${resource.memMB}`,
      });
    } else if (!Number.isInteger(resource.memMB)) {
      issues.push({
        path: `${path}.resource.memMB`,
        message: `must be a whole number of MiB, got ${resource.memMB}`,
      });
    }
    if (resource.cpu > 0 && !Number.isInteger(resource.cpu)) {
      issues.push({
        path: `${path}.resource.cpu`,
        message: `multi-node Batch jobs run on EC2 and need whole vCPUs, got ${resource.cpu}`,
      });
    }
    if (resource.gpu > 0 && !Number.isInteger(resource.gpu)) {
      issues.push({
        path: `${path}.resource.gpu`,
        message: `must be a whole number of GPUs, got ${resource.gpu}`,
      });
    }
    for (const device of Object.keys(resource.devices)) {
      const count = resource.devices[device] as number;
      if (device !== EFA_DEVICE && device !== NEURON_DEVICE) {
        issues.push({
          path: `${path}.resource.devices.${device}`,
          message: `unknown device '${device}'; AWS Batch supports ${EFA_DEVICE} and ${NEURON_DEVICE}`,
        });
      } else if (!Number.isInteger(count) || count < 0) {
        issues.push({
          path: `${path}.resource.devices.${device}`,
          message: `must be a whole number of devices, got ${count}`,
        });
      }
    }
    for (const name of Object.keys(role.env)) {
      if (name.startsWith('AWS_BATCH')) {
        issues.push({
          path: `${path}.env.${name}`,
          message: 'names starting with AWS_BATCH are reserved by AWS Batch; rename the variable',
        });
      }
    }
  }
}

function tagIssues(
  app: Readonly<AppDef>,
  cfg: Readonly<AwsBatchOpts>,
  stackTags: Readonly<Record<string, string>>,
  issues: FieldIssue[],
): void {
  for (const key of Object.keys(app.metadata)) {
    const value = app.metadata[key] as string;
    if (key.length < 1 || key.length > MAX_TAG_KEY_LENGTH) {
      issues.push({
        path: `app.metadata.${key}`,
        message: `becomes a tag; tag keys must have 1 to ${MAX_TAG_KEY_LENGTH} characters`,
      });
    } else if (key.toLowerCase().startsWith('aws:')) {
      issues.push({
        path: `app.metadata.${key}`,
        message: 'becomes a tag; keys starting with aws: are reserved by AWS',
      });
    }
    if (value.length > MAX_TAG_VALUE_LENGTH) {
      issues.push({
        path: `app.metadata.${key}`,
        message: `becomes a tag; tag values must have at most ${MAX_TAG_VALUE_LENGTH} characters`,
      });
    }
  }
  if (app.name.length > MAX_TAG_VALUE_LENGTH) {
    issues.push({
      path: 'app.name',
      message: `is the ${TORCHX_APP_NAME_TAG} tag; use at most ${MAX_TAG_VALUE_LENGTH} characters`,
    });
  }
  if (cfg.user.length > MAX_TAG_VALUE_LENGTH) {
    issues.push({
      path: 'cfg.user',
      message: `is the ${TORCHX_USER_TAG} tag; use at most ${MAX_TAG_VALUE_LENGTH} characters`,
    });
  }
  // TorchX's three tags alone are well within the limit.
  if (!hasKeys(app.metadata) && !hasKeys(stackTags)) return;
  const tagKeys = new Set([
    TORCHX_VERSION_TAG,
    TORCHX_APP_NAME_TAG,
    TORCHX_USER_TAG,
    ...Object.keys(app.metadata),
    ...Object.keys(stackTags),
  ]);
  if (tagKeys.size > MAX_TAGS) {
    issues.push({
      path: 'app.metadata',
      message: `makes ${tagKeys.size} tags with TorchX's three; AWS Batch allows ${MAX_TAGS}`,
    });
  }
}

/**
 * Checks the app and options against what AWS Batch accepts, collecting every problem. Called by the
 * translation (so a translation is never produced from bad input) and by `validate`.
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
  if (app.roles.length === 0)
    issues.push({ path: 'app.roles', message: 'the app has no roles; give at least one' });
  roleIssues(app, cfg, issues);
  if (cfg.priority < 0 || cfg.priority > MAX_PRIORITY) {
    issues.push({ path: 'cfg.priority', message: `must be 0 to ${MAX_PRIORITY}, got ${cfg.priority}` });
  }
  if (cfg.timeout !== null && cfg.timeout < MIN_TIMEOUT_SECONDS) {
    issues.push({
      path: 'cfg.timeout',
      message: `must be at least ${MIN_TIMEOUT_SECONDS} seconds, got ${cfg.timeout}`,
    });
  }
  for (const issue of awsBatchOptionIssues(cfg)) issues.push(issue);
  tagIssues(app, cfg, stackTags, issues);
  if (cfg.ulimits) {
    const ulimits = cfg.ulimits;
    issues.push(...parseIssues('cfg.ulimits', () => parseUlimits(ulimits)));
  }
  if (cfg.retry_rules) {
    const rules = cfg.retry_rules;
    issues.push(...parseIssues('cfg.retry_rules', () => parseRetryRules(rules)));
  }
  if (issues.length > 0) throw batchValidationError(issues);
}

function batchValidationError(issues: FieldIssue[]): ValidationError {
  const summary = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return new ValidationError(`The app cannot run on AWS Batch: ${summary}`, issues);
}

/**
 * The UTF-8 bytes of `request`'s JSON, plus `extra` bytes for each occurrence of the job name in it (the job
 * name sized for its longest unique suffix).
 */
function requestBytes(request: object, jobName: string, extra: number): number {
  const json = JSON.stringify(request);
  const occurrences = extra > 0 ? json.split(jobName).length - 1 : 0;
  return Buffer.byteLength(json, 'utf8') + occurrences * extra;
}

/**
 * Checks the requests against Batch's size quotas: the UTF-8 bytes of their JSON, plus `extra` bytes for
 * each occurrence of the job name when sizing for the longest unique suffix.
 *
 * @throws ValidationError naming `app` when the job definition exceeds 24 KiB or the SubmitJob payload 30 KiB.
 */
export function checkSizes(
  definition: RegisterJobDefinitionCommandInput,
  submitJob: SubmitJobCommandInput,
  jobName: string,
  extra: number,
): void {
  const limits = [
    {
      what: 'the job definition',
      request: definition,
      max: MAX_JOB_DEFINITION_BYTES,
      fix: 'Shorten args and env (e.g. move configuration into a file in the image or on S3)',
    },
    {
      what: 'the SubmitJob payload',
      request: submitJob,
      max: MAX_SUBMIT_PAYLOAD_BYTES,
      fix: 'Use fewer or shorter tags (app metadata) and env values',
    },
  ];
  const issues: FieldIssue[] = [];
  for (const { what, request, max, fix } of limits) {
    const bytes = requestBytes(request, jobName, extra);
    if (bytes > max) {
      issues.push({
        path: 'app',
        message: `${what} is ${bytes} bytes; AWS Batch allows ${max} (${max / 1024} KiB). ${fix}`,
      });
    }
  }
  if (issues.length > 0) throw batchValidationError(issues);
}
