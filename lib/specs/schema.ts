/**
 * The JSON schema of the HTTP API's AppDef and RunRequest, built with `zod/mini` (small enough to ship in
 * every Lambda bundle). Field names are camelCase; mounts are tagged by `type`; `resource` is an object or a
 * named-resource string. Every error names the field's path and what to do about it.
 *
 * @module
 */
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import {
  type AppDef,
  type CapabilityValue,
  type Mount,
  makeResource,
  makeRole,
  NULL_RESOURCE,
  type Resource,
  type Role,
} from './app-def.js';
import { SESSION_NAME_PATTERN, SESSION_NAME_RULE } from './app-handle.js';
import { type FieldIssue, ValidationError } from './errors.js';
import {
  MAX_LIST_ITEMS,
  MAX_METADATA_DEPTH,
  MAX_NAME_LENGTH,
  MAX_NUMBER_MAGNITUDE,
  MAX_REPLICAS,
  MAX_STRING_LENGTH,
  MIN_NUMBER_MAGNITUDE,
} from './limits.js';
import { namedResource } from './named-resources.js';
import { escapeUnsafeCharacters, hasUnsafeNameCharacters, UNSAFE_NAME_MESSAGE } from './names.js';
import type { Cfg } from './run-opts.js';
import { WORKSPACE_SHA256_PATTERN } from './workspaces.js';

// Only the English locale: `z.locales.en()` would pull every locale (~250 KB) into each bundle.
z.config(en());

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

// Every string must be well-formed Unicode (JSON escapes can carry lone surrogates, which AWS would reject
// only after the record is written).
const wellFormed = z.refine<string>((v) => v.isWellFormed(), 'contains invalid Unicode (a lone surrogate)');
const safeText = z.refine<string>((v) => !hasUnsafeNameCharacters(v), UNSAFE_NAME_MESSAGE);
const name = z
  .string()
  .check(z.minLength(1, 'must not be empty'), z.maxLength(MAX_NAME_LENGTH), wellFormed, safeText);
const text = z.string().check(z.maxLength(MAX_STRING_LENGTH), wellFormed);
const safeKey = z.string().check(
  z.minLength(1, 'keys must not be empty'),
  z.maxLength(MAX_NAME_LENGTH),
  wellFormed,
  safeText,
  z.refine((k) => !FORBIDDEN_KEYS.has(k), 'this key name is not allowed'),
);
const stringMap = z.record(safeKey, text);

function jsonDepthOk(value: unknown, depth: number): boolean {
  if (depth > MAX_METADATA_DEPTH) return false;
  if (Array.isArray(value)) return value.every((v) => jsonDepthOk(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).every(([k, v]) => !FORBIDDEN_KEYS.has(k) && jsonDepthOk(v, depth + 1));
  }
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

const metadataValue = z
  .unknown()
  .check(
    z.refine(
      (v) => jsonDepthOk(v, 1),
      `must be JSON (strings, numbers, booleans, lists, maps) nested at most ${MAX_METADATA_DEPTH} deep`,
    ),
  );

const mountSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('bind'),
    srcPath: name,
    dstPath: name,
    readOnly: z.optional(z.boolean()),
  }),
  z.strictObject({ type: z.literal('volume'), src: name, dstPath: name, readOnly: z.optional(z.boolean()) }),
  z.strictObject({
    type: z.literal('device'),
    srcPath: name,
    dstPath: z.optional(name),
    permissions: z.optional(
      z
        .string()
        .check(z.regex(/^[rwm]{1,3}$/, 'use a combination of r (read), w (write) and m (mknod), e.g. rwm')),
    ),
  }),
]);

const resourceObject = z.strictObject({
  cpu: z.number(),
  gpu: z.number(),
  memMB: z.number(),
  capabilities: z.optional(z.record(safeKey, z.union([z.string(), z.number(), z.boolean()]))),
  devices: z.optional(z.record(safeKey, z.int().check(z.minimum(0)))),
});

const roleSchema = z.strictObject({
  name,
  image: z.string().check(z.maxLength(MAX_NAME_LENGTH), wellFormed, safeText),
  entrypoint: name,
  args: z.optional(z.array(text).check(z.maxLength(MAX_LIST_ITEMS))),
  env: z.optional(stringMap),
  numReplicas: z.optional(z.int().check(z.minimum(1, 'must be at least 1'), z.maximum(MAX_REPLICAS))),
  minReplicas: z.optional(z.int().check(z.minimum(0), z.maximum(MAX_REPLICAS))),
  maxRetries: z.optional(z.int().check(z.minimum(0), z.maximum(1_000))),
  retryPolicy: z.optional(z.enum(['REPLICA', 'APPLICATION', 'ROLE'])),
  resource: z.optional(z.union([name, resourceObject])),
  portMap: z.optional(z.record(safeKey, z.int().check(z.minimum(0), z.maximum(65_535)))),
  metadata: z.optional(z.record(safeKey, metadataValue)),
  mounts: z.optional(z.array(mountSchema).check(z.maxLength(64))),
});

/** The JSON form of an AppDef the API accepts (request bodies) and returns (`app` of responses). */
export const appDefSchema = z.strictObject({
  name,
  roles: z.array(roleSchema).check(z.minLength(1, 'an app needs at least one role'), z.maxLength(64)),
  metadata: z.optional(stringMap),
});

const cfgValue = z.union([
  z.string().check(z.maxLength(MAX_STRING_LENGTH)),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.string().check(z.maxLength(MAX_STRING_LENGTH))).check(z.maxLength(MAX_LIST_ITEMS)),
  stringMap,
  z.array(stringMap).check(z.maxLength(MAX_LIST_ITEMS)),
]);
/** A run configuration: option name → value (`cfg` of requests and responses). */
export const cfgSchema = z.record(safeKey, cfgValue);

/** The schedulers that take a workspace, and an archive's content address: in a module without zod for the CLI. */
export {
  WORKSPACE_ARCHIVE_SOURCES,
  WORKSPACE_SCHEDULERS,
  WORKSPACE_SHA256_PATTERN,
} from './workspaces.js';

/**
 * The largest workspace archive accepted (bytes): the client's 500 MiB content limit, compressed, with room
 * for headers. A single S3 PUT takes up to 5 GB, so one presigned URL carries any archive under it.
 */
export const MAX_WORKSPACE_ARCHIVE_BYTES = 600 * 1024 * 1024;

const workspaceSha256 = z
  .string()
  .check(
    z.regex(WORKSPACE_SHA256_PATTERN, 'must be the SHA-256 of the uploaded archive: 64 lowercase hex digits'),
  );

/** A run request's workspace: the archive stored through `POST /v1/workspaces`, named by its hash. */
export const workspaceRefSchema = z.strictObject({ sha256: workspaceSha256 });

/**
 * Body of `POST /v1/workspaces`: the archive the caller is about to run with, which the server either holds
 * already or answers an upload for, pinned to exactly this hash and length.
 */
export const workspaceOfferSchema = z.strictObject({
  sha256: workspaceSha256,
  size: z
    .int()
    .check(
      z.minimum(1, 'must be the archive’s length in bytes (at least 1)'),
      z.maximum(
        MAX_WORKSPACE_ARCHIVE_BYTES,
        `must be at most ${MAX_WORKSPACE_ARCHIVE_BYTES} bytes (600 MiB); leave large files out with .torchxignore`,
      ),
    ),
  fileCount: z.int().check(z.minimum(0, 'must be the number of regular files in the archive (0 or more)')),
  /**
   * The scheduler the caller will run with, when it knows: the server refuses an archive that run could not
   * use before anything is uploaded (e.g. the local server without a workspace bucket, for aws_batch).
   */
  scheduler: z.optional(name),
});

/** A validated `POST /v1/workspaces` body. */
export type WorkspaceOffer = z.output<typeof workspaceOfferSchema>;

/** Body of `POST /v1/apps` and `POST /v1/dryrun`: an AppDef or a builtin component with its arguments. */
export const runRequestSchema = z.strictObject({
  scheduler: name,
  session: z.optional(z.string().check(z.regex(SESSION_NAME_PATTERN, SESSION_NAME_RULE))),
  cfg: z.optional(cfgSchema),
  app: z.optional(appDefSchema),
  component: z.optional(name),
  args: z.optional(z.array(text).check(z.maxLength(MAX_LIST_ITEMS))),
  workspace: z.optional(workspaceRefSchema),
});

/** The JSON form of an AppDef accepted by the API (before defaults are applied). */
export type AppDefInput = z.input<typeof appDefSchema>;

/** A validated run/dryrun request: either an AppDef or a builtin component with its CLI arguments. */
export type RunRequest = (
  | { scheduler: string; session?: string; cfg: Cfg; app: AppDef; component?: undefined; args?: undefined }
  | { scheduler: string; session?: string; cfg: Cfg; app?: undefined; component: string; args: string[] }
) & {
  /** The workspace archive the replicas start in (local_cwd only, for now). */
  workspace?: { sha256: string };
};

const CAMEL_HINTS: Readonly<Record<string, string>> = {
  num_replicas: 'numReplicas',
  min_replicas: 'minReplicas',
  max_retries: 'maxRetries',
  retry_policy: 'retryPolicy',
  port_map: 'portMap',
  mem_mb: 'memMB',
  memMb: 'memMB',
  mem: 'memMB',
  src_path: 'srcPath',
  dst_path: 'dstPath',
  read_only: 'readOnly',
  readonly: 'readOnly',
  cmd: 'entrypoint',
  command: 'entrypoint',
  replicas: 'numReplicas',
};

function joinPath(base: string, path: readonly PropertyKey[]): string {
  return [base, ...path.map((p) => escapeUnsafeCharacters(String(p)))].filter((p) => p.length > 0).join('.');
}

function describeReceived(input: unknown): string {
  if (input === undefined) return 'nothing';
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  return typeof input === 'object' ? 'an object' : `${typeof input} ${JSON.stringify(input).slice(0, 40)}`;
}

/** Turns zod issues into field issues whose messages say what to fix. */
export function toFieldIssues(issues: readonly z.core.$ZodIssue[], base: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of issues) {
    const path = joinPath(base, issue.path);
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const hint = CAMEL_HINTS[key];
        out.push({
          path: joinPath(path, [key]),
          message: hint
            ? `unknown field '${key}'; did you mean '${hint}'?`
            : `unknown field '${key}'; remove it`,
        });
      }
    } else if (issue.code === 'invalid_key') {
      // A map key failed its rule: say which rule (the nested issue), not zod's generic "Invalid key".
      out.push({ path, message: issue.issues[0]?.message ?? issue.message });
    } else if (issue.code === 'invalid_type' && issue.input === undefined) {
      out.push({ path, message: `is required (expected ${issue.expected})` });
    } else if (issue.code === 'invalid_type') {
      out.push({
        path,
        message: `must be ${issue.expected === 'int' ? 'an integer' : `a ${issue.expected}`}, got ${describeReceived(issue.input)}`,
      });
    } else if (issue.code === 'invalid_union' && path.endsWith('.resource')) {
      const objectBranch = issue.errors[1];
      if (
        issue.input !== null &&
        typeof issue.input === 'object' &&
        !Array.isArray(issue.input) &&
        objectBranch
      ) {
        // An object was given: report what is wrong inside it (e.g. resource.memMB), not the union.
        out.push(...toFieldIssues(objectBranch, path));
      } else {
        out.push({
          path,
          message: 'must be a named resource such as "aws_g5.xlarge" or an object {cpu, gpu, memMB}',
        });
      }
    } else if (
      issue.code === 'invalid_union' &&
      'note' in issue &&
      issue.note === 'No matching discriminator'
    ) {
      out.push({ path, message: 'must be one of "bind", "volume" or "device"' });
    } else {
      out.push({ path, message: issue.message });
    }
  }
  return out;
}

/** Deepest nesting of any request body. */
export const MAX_BODY_DEPTH = 32;

/**
 * True for a number every part of the system can keep: finite, and 0 or of a magnitude DynamoDB stores
 * ({@link MIN_NUMBER_MAGNITUDE} up to {@link MAX_NUMBER_MAGNITUDE}). JSON numbers carry at most 17
 * significant digits here, within DynamoDB's 38.
 *
 * @example
 * ```ts
 * isStorableNumber(0.5); // true
 * isStorableNumber(1e300); // false
 * ```
 */
export function isStorableNumber(value: number): boolean {
  const magnitude = Math.abs(value);
  return (
    value === 0 ||
    (Number.isFinite(value) && magnitude >= MIN_NUMBER_MAGNITUDE && magnitude < MAX_NUMBER_MAGNITUDE)
  );
}

const UNSTORABLE_NUMBER_MESSAGE =
  `must be 0 or a number of magnitude ${MIN_NUMBER_MAGNITUDE} to ${MAX_NUMBER_MAGNITUDE} ` +
  '(what the app record can hold); give a smaller number, or the value as a string';

/**
 * Rejects keys that could pollute prototypes (`__proto__`, `constructor`, `prototype`) anywhere in the input,
 * input nested deeper than {@link MAX_BODY_DEPTH}, and numbers the app record cannot hold
 * ({@link isStorableNumber}: wherever they are, including free-form cfg values and metadata), before any
 * schema runs.
 */
function checkStructure(input: unknown, path: string, depth: number, what: string): void {
  if (typeof input === 'number' && !isStorableNumber(input)) {
    failWith([{ path: path || 'body', message: `${UNSTORABLE_NUMBER_MESSAGE} (got ${input})` }], what);
  }
  if (input === null || typeof input !== 'object') return;
  if (depth > MAX_BODY_DEPTH) {
    failWith([{ path, message: `is nested more than ${MAX_BODY_DEPTH} levels deep` }], what);
  }
  if (Array.isArray(input)) {
    input.forEach((v, i) => {
      checkStructure(v, `${path}.${i}`, depth + 1, what);
    });
    return;
  }
  for (const key of Object.keys(input)) {
    const child = joinPath(path, [key]);
    if (FORBIDDEN_KEYS.has(key)) failWith([{ path: child, message: 'this key name is not allowed' }], what);
    checkStructure((input as Record<string, unknown>)[key], child, depth + 1, what);
  }
}

function failWith(issues: FieldIssue[], what: string): never {
  const first = issues[0];
  const summary = first ? `${first.path}: ${first.message}` : 'invalid';
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  throw new ValidationError(`Invalid ${what}: ${summary}${more}`, issues);
}

function toResource(value: string | z.output<typeof resourceObject> | undefined, path: string): Resource {
  if (value === undefined) return makeResource(NULL_RESOURCE);
  if (typeof value === 'string') return namedResource(value, path);
  return makeResource({
    cpu: value.cpu,
    gpu: value.gpu,
    memMB: value.memMB,
    capabilities: (value.capabilities ?? {}) as Record<string, CapabilityValue>,
    devices: value.devices ?? {},
  });
}

function toMount(m: z.output<typeof mountSchema>): Mount {
  switch (m.type) {
    case 'bind':
      return { type: 'bind', srcPath: m.srcPath, dstPath: m.dstPath, readOnly: m.readOnly ?? false };
    case 'volume':
      return { type: 'volume', src: m.src, dstPath: m.dstPath, readOnly: m.readOnly ?? false };
    case 'device':
      return {
        type: 'device',
        srcPath: m.srcPath,
        dstPath: m.dstPath ?? m.srcPath,
        permissions: m.permissions ?? 'rwm',
      };
  }
}

function toAppDef(parsed: z.output<typeof appDefSchema>, base: string): AppDef {
  const roles: Role[] = parsed.roles.map((r, i) => {
    const role = makeRole({
      name: r.name,
      image: r.image,
      entrypoint: r.entrypoint,
      args: r.args ?? [],
      env: r.env ?? {},
      numReplicas: r.numReplicas ?? 1,
      maxRetries: r.maxRetries ?? 0,
      retryPolicy: r.retryPolicy ?? 'APPLICATION',
      resource: toResource(r.resource, `${base}.roles.${i}.resource`),
      portMap: r.portMap ?? {},
      metadata: (r.metadata ?? {}) as Record<string, unknown>,
      mounts: (r.mounts ?? []).map(toMount),
    });
    if (r.minReplicas !== undefined) role.minReplicas = r.minReplicas;
    return role;
  });
  const names = new Set<string>();
  roles.forEach((role, i) => {
    if (names.has(role.name)) {
      failWith(
        [
          {
            path: `${base}.roles.${i}.name`,
            message: `role name '${role.name}' is used twice; role names must be unique`,
          },
        ],
        'AppDef',
      );
    }
    names.add(role.name);
  });
  return { name: parsed.name, roles, metadata: parsed.metadata ?? {} };
}

/**
 * Validates the JSON form of an AppDef and returns it with TorchX's defaults applied and named resources
 * resolved.
 *
 * @param base path prefix for error messages (e.g. `app`)
 * @throws ValidationError naming each bad field.
 * @example
 * ```ts
 * const app = parseAppDef({ name: 'hello', roles: [{ name: 'echo', image: 'alpine', entrypoint: 'echo',
 *   args: ['hi'], resource: 'cpu.small' }] });
 * ```
 */
export function parseAppDef(input: unknown, base = 'app'): AppDef {
  checkStructure(input, base, 0, 'AppDef');
  const result = z.safeParse(appDefSchema, input, { reportInput: true });
  if (!result.success) failWith(toFieldIssues(result.error.issues, base), 'AppDef');
  return toAppDef(result.data, base);
}

/**
 * Validates a run or dryrun request body: `{scheduler, cfg?, session?, app}` or
 * `{scheduler, cfg?, session?, component, args?}`.
 *
 * @throws ValidationError naming each bad field.
 */
export function parseRunRequest(input: unknown): RunRequest {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    failWith(
      [
        {
          path: 'body',
          message: 'must be a JSON object such as {"scheduler": "local_cwd", "component": "utils.echo"}',
        },
      ],
      'request',
    );
  }
  checkStructure(input, '', 0, 'request');
  const result = z.safeParse(runRequestSchema, input, { reportInput: true });
  if (!result.success) failWith(toFieldIssues(result.error.issues, ''), 'request');
  const { scheduler, session, cfg = {}, app, component, args, workspace } = result.data;
  if (app !== undefined && component !== undefined) {
    failWith([{ path: 'component', message: 'give either "app" or "component", not both' }], 'request');
  }
  if (app === undefined && component === undefined) {
    failWith(
      [
        {
          path: 'app',
          message: 'is required: give an AppDef in "app" or a builtin in "component" (e.g. "utils.echo")',
        },
      ],
      'request',
    );
  }
  if (app !== undefined && args !== undefined) {
    failWith(
      [{ path: 'args', message: '"args" only goes with "component"; put arguments in the role\'s args' }],
      'request',
    );
  }
  const common = {
    scheduler,
    cfg: cfg as Cfg,
    ...(session === undefined ? {} : { session }),
    ...(workspace === undefined ? {} : { workspace: { sha256: workspace.sha256 } }),
  };
  if (app !== undefined) return { ...common, app: toAppDef(app, 'app') };
  return { ...common, component: component as string, args: args ?? [] };
}

/**
 * Validates a `POST /v1/workspaces` body: `{sha256, size, fileCount}`.
 *
 * @throws ValidationError naming each bad field.
 */
export function parseWorkspaceOffer(input: unknown): WorkspaceOffer {
  const result = z.safeParse(workspaceOfferSchema, input, { reportInput: true });
  if (!result.success) failWith(toFieldIssues(result.error.issues, ''), 'workspace');
  return result.data;
}

/** Validates a cfg object on its own (e.g. from a config file). */
export function parseCfg(input: unknown, base = 'cfg'): Cfg {
  checkStructure(input, base, 0, 'cfg');
  const result = z.safeParse(cfgSchema, input, { reportInput: true });
  if (!result.success) failWith(toFieldIssues(result.error.issues, base), 'cfg');
  return result.data as Cfg;
}
