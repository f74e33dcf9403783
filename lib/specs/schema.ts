/**
 * The JSON schema of the HTTP API's AppDef and RunRequest, built with `zod/mini` (small enough to ship in
 * every Lambda bundle). Field names are camelCase; mounts are tagged by `type`; `resource` is an object or a
 * named-resource string. Every error names the field's path and what to do about it. The field rules and
 * the issue translation all bodies share are in `schema-fields.ts`; the workspace offer, which the workspaces
 * route parses alone, in `workspace-offer.ts`.
 *
 * @module
 */
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
import {
  MAX_LIST_ITEMS,
  MAX_METADATA_DEPTH,
  MAX_NAME_LENGTH,
  MAX_REPLICAS,
  MAX_STRING_LENGTH,
} from './limits.js';
import { namedResource } from './named-resources.js';
import type { Cfg } from './run-opts.js';
import {
  checkStructure,
  FORBIDDEN_KEYS,
  failWith,
  name,
  safeKey,
  safeText,
  stringMap,
  text,
  toFieldIssues,
  wellFormed,
} from './schema-fields.js';
import { workspaceRefSchema } from './workspace-offer.js';

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

/** Validates a cfg object on its own (e.g. from a config file). */
export function parseCfg(input: unknown, base = 'cfg'): Cfg {
  checkStructure(input, base, 0, 'cfg');
  const result = z.safeParse(cfgSchema, input, { reportInput: true });
  if (!result.success) failWith(toFieldIssues(result.error.issues, base), 'cfg');
  return result.data as Cfg;
}
