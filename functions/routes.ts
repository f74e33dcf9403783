/**
 * The API's routes: one Lambda function per route. The CDK stack creates a function and an API Gateway
 * method from each entry; the local server routes HTTP requests with the same table. Pure data.
 */

/** One API route. */
export interface RouteDefinition {
  /** Function id, e.g. `Run`. */
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** API Gateway resource path with `{param}` segments. */
  readonly path: string;
  /** Handler module, relative to the repository root. */
  readonly entry: string;
}

/** Every API route, in the order of docs/http-api.md. */
export const ROUTES: readonly RouteDefinition[] = [
  { name: 'Schedulers', method: 'GET', path: '/v1/schedulers', entry: 'functions/api/schedulers.ts' },
  { name: 'Components', method: 'GET', path: '/v1/components', entry: 'functions/api/components.ts' },
  { name: 'Dryrun', method: 'POST', path: '/v1/dryrun', entry: 'functions/api/dryrun.ts' },
  { name: 'Workspaces', method: 'POST', path: '/v1/workspaces', entry: 'functions/api/workspaces.ts' },
  { name: 'Run', method: 'POST', path: '/v1/apps', entry: 'functions/api/run.ts' },
  { name: 'List', method: 'GET', path: '/v1/apps', entry: 'functions/api/list.ts' },
  { name: 'Counts', method: 'GET', path: '/v1/apps/counts', entry: 'functions/api/counts.ts' },
  { name: 'Status', method: 'GET', path: '/v1/apps/{scheduler}/{appId}', entry: 'functions/api/status.ts' },
  {
    name: 'Delete',
    method: 'DELETE',
    path: '/v1/apps/{scheduler}/{appId}',
    entry: 'functions/api/delete.ts',
  },
  {
    name: 'Cancel',
    method: 'POST',
    path: '/v1/apps/{scheduler}/{appId}/cancel',
    entry: 'functions/api/cancel.ts',
  },
  { name: 'Logs', method: 'GET', path: '/v1/apps/{scheduler}/{appId}/logs', entry: 'functions/api/logs.ts' },
  { name: 'OpenApi', method: 'GET', path: '/v1/openapi.json', entry: 'functions/api/openapi.ts' },
];

/** The event-triggered functions (EventBridge rules, the schedule, the app table's stream). */
export const EVENT_FUNCTIONS = {
  stateChange: { name: 'StateChange', entry: 'functions/events/state-change.ts' },
  reconciler: { name: 'Reconciler', entry: 'functions/reconciler/handler.ts' },
  /** The outbox publisher: the app table's stream to `AppState Change` events on the bus. */
  publisher: { name: 'Publisher', entry: 'functions/events/publisher.ts' },
} as const;

/** A function the stack deploys: its id and handler module. */
export interface FunctionDefinition {
  /** Function id, e.g. `Run`, `StateChange`. */
  readonly name: string;
  /** Handler module, relative to the repository root. */
  readonly entry: string;
}

/**
 * Every function the stack deploys, API routes first: the one list the package build (`npm run build`, one
 * prebuilt bundle per function) and the benchmarks iterate, so that a function added to {@link ROUTES} or
 * {@link EVENT_FUNCTIONS} is built and shipped with no other change.
 */
export const FUNCTIONS: readonly FunctionDefinition[] = [
  ...ROUTES,
  ...Object.values<FunctionDefinition>(EVENT_FUNCTIONS),
];
