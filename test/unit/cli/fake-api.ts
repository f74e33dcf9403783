/**
 * A small in-memory stand-in for the API v1, over real HTTP, for the CLI's command tests. Each app follows
 * a scripted list of states, advancing one state per status read; its log lines appear as it runs.
 *
 * Every answer it sends is checked against the published contract (docs/openapi.json, generated from the
 * response schemas of lib/specs/api.ts): an answer the real API could not give is replaced by a 500 naming
 * the mismatch, and `close()` throws, so a fake that drifts from the contract fails the test that used it.
 */

import { runOptsFromDescriptions } from '../../../lib/cli/cfg.js';
import {
  type AppState,
  type Cfg,
  castRunOptValue,
  InvalidRunConfigError,
  type RunOptDescription,
} from '../../../lib/specs/index.js';
import { contractProblems } from '../../helpers/openapi-validator.js';
import {
  apiError,
  type RecordedRequest,
  type StubReply,
  type StubServer,
  startStubServer,
} from './helpers.js';

export interface FakeAppScript {
  name?: string;
  roles?: { name: string; numReplicas: number }[];
  /** States after submission, one per status read (the last one stays). */
  states?: AppState[];
  /** Log lines per `role/replica`, all visible once the app is RUNNING. */
  logs?: Record<string, string[]>;
  reason?: string;
  /** Status reads that answer 404 first (a store read lagging its write). */
  hiddenReads?: number;
  /** `warnings` of the run or dry-run response. */
  warnings?: string[];
  /** Every replica's `structuredErrorMsg` once the app is FAILED. */
  errorDocument?: string;
}

interface FakeApp {
  handle: string;
  scheduler: string;
  session: string;
  appId: string;
  name: string;
  roles: { name: string; numReplicas: number }[];
  states: AppState[];
  step: number;
  history: { from: AppState; to: AppState; time: string; source: string; reason?: string }[];
  logs: Record<string, string[]>;
  createdAt: number;
  cfg: unknown;
  cancelRequestedAt?: string;
  reason?: string;
  hiddenReads: number;
  errorDocument?: string;
}

export interface FakeApi {
  url: string;
  requests: RecordedRequest[];
  /** See {@link StubServer.ownSocketEnv}. */
  ownSocketEnv: StubServer['ownSocketEnv'];
  apps: Map<string, FakeApp>;
  /** What the next POST /v1/apps creates. */
  nextRun: FakeAppScript;
  /**
   * Answer dry runs as a deployed stack does, naming where the job fetches the request's workspace and
   * whether the caller has uploaded it (its hash in this set); unset: as the local server, naming nothing.
   */
  deployedWorkspaces?: Set<string>;
  /** Adds an app directly. */
  addApp(handle: string, script: FakeAppScript, createdAt?: number): FakeApp;
  /** Stops the server; throws when any answer it sent did not match the contract. */
  close(): Promise<void>;
}

const T0 = Date.parse('2026-01-15T12:00:00Z');

export const SCHEDULERS = [
  {
    name: 'local_cwd',
    capabilities: {
      cancel: true,
      logs: true,
      describe: 'full',
      distributed: true,
      mounts: false,
      retries: false,
      elasticity: false,
    },
    runOpts: [
      {
        name: 'log_dir',
        type: 'str',
        default: null,
        required: false,
        help: 'where logs go',
        aliases: ['logDir'],
      },
      { name: 'cwd', type: 'str', default: null, required: false, help: 'working directory', aliases: [] },
      { name: 'env', type: 'dict[str,str]', default: null, required: false, help: 'caller env', aliases: [] },
      {
        name: 'prepend_cwd',
        type: 'bool',
        default: false,
        required: false,
        help: 'prepend cwd to PATH',
        aliases: ['prependCwd'],
      },
    ],
  },
  {
    name: 'aws_batch',
    capabilities: {
      cancel: true,
      logs: true,
      describe: 'partial',
      distributed: true,
      mounts: true,
      retries: true,
      elasticity: false,
    },
    runOpts: [
      { name: 'queue', type: 'str', default: null, required: true, help: 'job queue', aliases: [] },
      { name: 'priority', type: 'int', default: 0, required: false, help: 'priority', aliases: [] },
    ],
  },
];

export const COMPONENTS = [
  {
    name: 'utils.echo',
    description: 'Echoes a message to stdout.',
    args: [
      {
        name: 'msg',
        flags: ['--msg'],
        type: 'str',
        default: 'hello world',
        required: false,
        help: 'message',
      },
    ],
  },
  {
    name: 'utils.sh',
    description: 'Runs a shell command.',
    args: [],
    varargs: { name: 'args', help: 'the command' },
  },
];

/** The fields that name an app in every answer about it. */
function handleFields(app: FakeApp) {
  return { handle: app.handle, scheduler: app.scheduler, session: app.session, appId: app.appId };
}

function appJson(app: FakeApp) {
  const state = app.states[Math.min(app.step, app.states.length - 1)] ?? 'SUBMITTED';
  return {
    ...handleFields(app),
    name: app.name,
    owner: 'tester',
    createdAt: new Date(app.createdAt).toISOString(),
    updatedAt: new Date(app.createdAt + app.step * 1000).toISOString(),
    status: {
      state,
      numRestarts: 0,
      msg: app.reason ?? '',
      structuredErrorMsg: '<NONE>',
      roles: app.roles.map((r) => ({
        role: r.name,
        replicas: Array.from({ length: r.numReplicas }, (_, id) => ({
          id,
          state,
          role: r.name,
          hostname: 'localhost',
          structuredErrorMsg: state === 'FAILED' ? (app.errorDocument ?? '<NONE>') : '<NONE>',
        })),
      })),
    },
    app: {
      name: app.name,
      roles: app.roles.map((r) => ({
        name: r.name,
        image: '/tmp',
        entrypoint: 'echo',
        args: ['hi'],
        numReplicas: r.numReplicas,
      })),
      metadata: {},
    },
    cfg: app.cfg ?? {},
    history: [...app.history],
  };
}

function currentState(app: FakeApp): AppState {
  return app.states[Math.min(app.step, app.states.length - 1)] ?? 'SUBMITTED';
}

function advance(app: FakeApp): void {
  if (app.step >= app.states.length - 1) return;
  const from = currentState(app);
  app.step += 1;
  const to = currentState(app);
  app.history.push({
    from,
    to,
    time: new Date(app.createdAt + app.step * 1500).toISOString(),
    source: 'event',
    ...(to === 'FAILED' && app.reason ? { reason: app.reason } : {}),
  });
}

export async function startFakeApi(): Promise<FakeApi> {
  const apps = new Map<string, FakeApp>();
  let counter = 0;
  const api: Omit<FakeApi, 'url' | 'requests' | 'ownSocketEnv' | 'close'> & { nextRun: FakeAppScript } = {
    apps,
    nextRun: {},
    addApp(handle, script, createdAt = T0) {
      const [scheduler = '', rest = ''] = handle.split('://');
      const [session = '', appId = ''] = rest.split('/');
      const app: FakeApp = {
        handle,
        scheduler,
        session,
        appId,
        name: script.name ?? appId.replace(/-\w+$/, ''),
        roles: script.roles ?? [{ name: script.name ?? 'echo', numReplicas: 1 }],
        states: script.states ?? ['SUBMITTED', 'PENDING', 'RUNNING', 'SUCCEEDED'],
        step: 0,
        history: [
          { from: 'UNSUBMITTED', to: 'SUBMITTED', time: new Date(createdAt).toISOString(), source: 'submit' },
        ],
        logs: script.logs ?? {},
        createdAt,
        cfg: {},
        hiddenReads: script.hiddenReads ?? 0,
        ...(script.reason === undefined ? {} : { reason: script.reason }),
        ...(script.errorDocument === undefined ? {} : { errorDocument: script.errorDocument }),
      };
      apps.set(handle, app);
      return app;
    },
  };

  const find = (request: RecordedRequest): FakeApp | undefined => {
    const match = /^\/v1\/apps\/([^/]+)\/([^/]+)/.exec(request.path);
    if (!match) return undefined;
    const scheduler = decodeURIComponent(match[1] ?? '');
    const appId = decodeURIComponent(match[2] ?? '');
    return [...apps.values()].find((a) => a.scheduler === scheduler && a.appId === appId);
  };

  const handler = (request: RecordedRequest): StubReply | undefined => {
    const { method, path, query } = request;
    if (method === 'GET' && path === '/v1/schedulers') return { body: { schedulers: SCHEDULERS } };
    if (method === 'GET' && path === '/v1/components') return { body: { components: COMPONENTS } };
    if (method === 'POST' && (path === '/v1/apps' || path === '/v1/dryrun')) {
      const body = request.body as {
        scheduler: string;
        session?: string;
        component?: string;
        app?: { name: string };
      };
      if (!SCHEDULERS.some((s) => s.name === body.scheduler)) {
        return apiError(400, 'UnknownScheduler', `Scheduler backend: ${body.scheduler} does not exist`);
      }
      // As the API does: TorchX's string forms are cast with the declared types; unknown keys are warned about.
      const info = SCHEDULERS.find((s) => s.name === body.scheduler);
      const opts = runOptsFromDescriptions((info?.runOpts ?? []) as RunOptDescription[]);
      const cfgIn = ((request.body as { cfg?: Cfg }).cfg ?? {}) as Cfg;
      for (const [key, value] of Object.entries(cfgIn)) {
        const opt = opts.get(key);
        if (opt === undefined || typeof value !== 'string' || opt.type === 'str') continue;
        try {
          castRunOptValue(opt, value);
        } catch (error) {
          if (!(error instanceof InvalidRunConfigError)) throw error;
          return apiError(400, 'InvalidRunConfig', error.message, [
            { path: `cfg.${opt.name}`, message: error.message },
          ]);
        }
      }
      const name = api.nextRun.name ?? body.app?.name ?? (body.component ?? 'app').split('.').pop() ?? 'app';
      const allWarnings = [
        ...(api.nextRun.warnings ?? []),
        ...opts.unknownKeyWarnings(cfgIn, body.scheduler),
      ];
      const warnings = allWarnings.length === 0 ? {} : { warnings: allWarnings };
      if (path === '/v1/dryrun') {
        const ref = (request.body as { workspace?: { sha256: string } }).workspace;
        const held = api.deployedWorkspaces;
        const workspace =
          ref === undefined || held === undefined
            ? {}
            : {
                workspace: {
                  sha256: ref.sha256,
                  size: 0,
                  fileCount: 0,
                  archive: `s3://txs-workspaces/workspaces/owner/${ref.sha256}.tar.gz`,
                  stored: held.has(ref.sha256),
                },
              };
        return {
          body: {
            ...workspace,
            scheduler: body.scheduler,
            app: { name, roles: [{ name, image: '/tmp', entrypoint: 'echo', args: [] }], metadata: {} },
            cfg: {},
            request: { replicas: [] },
            text: `would run ${name}`,
            ...warnings,
          },
        };
      }
      counter += 1;
      const handle = `${body.scheduler}://${body.session ?? 'torchx'}/${name}-${counter}`;
      const app = api.addApp(handle, { ...api.nextRun, name });
      app.cfg = (request.body as { cfg?: unknown }).cfg ?? {};
      return {
        status: 201,
        body: {
          ...handleFields(app),
          state: 'SUBMITTED',
          ...warnings,
        },
      };
    }
    if (method === 'GET' && path === '/v1/apps') {
      const states = query.getAll('state');
      let list = [...apps.values()]
        .filter((a) => (query.get('scheduler') ? a.scheduler === query.get('scheduler') : true))
        .filter((a) => (states.length > 0 ? states.includes(currentState(a)) : true))
        .sort((a, b) => b.createdAt - a.createdAt);
      const start = Number(query.get('nextToken') ?? '0');
      const limit = Number(query.get('limit') ?? '50');
      const page = list.slice(start, start + limit);
      list = page;
      const more = start + limit < [...apps.values()].length && page.length === limit;
      return {
        body: {
          apps: page.map((a) => ({
            ...handleFields(a),
            name: a.name,
            owner: 'tester',
            state: currentState(a),
            createdAt: new Date(a.createdAt).toISOString(),
            updatedAt: new Date(a.createdAt).toISOString(),
          })),
          ...(more ? { nextToken: String(start + limit) } : {}),
        },
      };
    }
    const app = find(request);
    if (path.startsWith('/v1/apps/') && app === undefined) {
      return apiError(404, 'UnknownApp', `Unknown app = ${path}`);
    }
    if (app === undefined) return undefined;
    if (method === 'GET' && path.endsWith('/logs')) {
      const key = `${query.get('role')}/${query.get('replica') ?? '0'}`;
      const state = currentState(app);
      const started =
        state === 'RUNNING' || state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED';
      let lines = started ? (app.logs[key] ?? []) : [];
      const regex = query.get('regex');
      if (regex) lines = lines.filter((l) => new RegExp(regex).test(l));
      const offset = Number(query.get('nextToken') ?? '0');
      const limit = Number(query.get('limit') ?? '1000');
      const page = lines.slice(offset, offset + limit);
      const end = offset + page.length;
      const terminal = state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED';
      const complete = terminal && end >= lines.length;
      return {
        body: { lines: page, ...(complete ? {} : { nextToken: String(end) }), caughtUp: end >= lines.length },
      };
    }
    if (method === 'GET' && app.hiddenReads > 0) {
      app.hiddenReads -= 1;
      return apiError(404, 'UnknownApp', `Unknown app = ${app.handle}`);
    }
    if (method === 'GET') {
      const reply = { body: appJson(app) };
      advance(app);
      return reply;
    }
    if (method === 'POST' && path.endsWith('/cancel')) {
      const from = currentState(app);
      if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(from)) {
        app.states = [...app.states.slice(0, app.step + 1), 'CANCELLED'];
        app.cancelRequestedAt ??= new Date(T0).toISOString();
        advance(app);
      }
      const requested =
        app.cancelRequestedAt === undefined ? {} : { cancelRequestedAt: app.cancelRequestedAt };
      return { status: 202, body: { ...handleFields(app), state: currentState(app), ...requested } };
    }
    if (method === 'DELETE') return { status: 202, body: { ...handleFields(app), state: currentState(app) } };
    return undefined;
  };

  const broken: string[] = [];
  const checked = (request: RecordedRequest): StubReply | undefined => {
    const reply = handler(request);
    if (reply === undefined || reply.text !== undefined) return reply;
    const problems = contractProblems(request.method, request.path, reply.status ?? 200, reply.body ?? {});
    if (problems.length === 0) return reply;
    broken.push(...problems);
    return apiError(500, 'FakeApiBrokeContract', `the fake API's answer breaks the contract: ${problems[0]}`);
  };
  const server: StubServer = await startStubServer(checked);
  return Object.assign(api, {
    url: server.url,
    requests: server.requests,
    ownSocketEnv: server.ownSocketEnv,
    async close() {
      await server.close();
      if (broken.length > 0) {
        throw new Error(`the fake API sent answers the real API cannot give:\n${broken.join('\n')}`);
      }
    },
  });
}
