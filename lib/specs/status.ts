/**
 * Runtime status of an app (TorchX `AppStatus`, `ReplicaStatus`, `RoleStatus`) and the scheduler-facing
 * responses `DescribeAppResponse` and `ListAppResponse`.
 *
 * @module
 */
import type { Role } from './app-def.js';
import { NONE } from './app-def.js';
import { type AppState, isTerminal } from './app-state.js';
import { AppStatusError } from './errors.js';
import { displayText } from './names.js';
import type { AttemptOutcome, StateReason } from './state-reason.js';

/** Status of one replica (node) of a role. */
export interface ReplicaStatus {
  /** Node index within the role (not the worker rank). */
  id: number;
  state: AppState;
  /** Role name. */
  role: string;
  /** Host the replica runs on, when known. */
  hostname: string;
  /** JSON error document, or `<NONE>`. */
  structuredErrorMsg: string;
  /** Exit code of the replica's process or container, when known (torchx-serverless addition). */
  exitCode?: number;
  /** Free text from the scheduler about this replica (torchx-serverless addition). */
  reason?: string;
}

/** Statuses of all replicas of one role. */
export interface RoleStatus {
  role: string;
  replicas: ReplicaStatus[];
}

/** Plain-data form of an {@link AppStatus} (its fields, no methods), as it travels over HTTP. */
export type AppStatusData = {
  [K in keyof AppStatus as AppStatus[K] extends (...args: never[]) => unknown ? never : K]: AppStatus[K];
};

const APP_STATUS_TEMPLATE = (s: {
  state: string;
  numRestarts: string;
  roles: string;
  msg: string;
  structuredErrorMsg: string;
  url: string;
}): string =>
  `AppStatus:\n    State: ${s.state}\n    Num Restarts: ${s.numRestarts}\n    Roles: ${s.roles}\n` +
  `    Msg: ${s.msg}\n    Structured Error Msg: ${s.structuredErrorMsg}\n    UI URL: ${s.url}\n    `;

const RPC_ERROR_MESSAGE = /(\w*)\('On WorkerInfo\(.+\):\n(.*\n)*'\)/;
const EMBEDDED_ERROR_MESSAGE = /(.+)\nException.*/;

/** Python's `datetime.fromtimestamp(ts)` rendering in local time: `YYYY-MM-DD HH:MM:SS`. */
function pythonLocalTimestamp(epochSeconds: number): string {
  const d = new Date(epochSeconds * 1000);
  if (Number.isNaN(d.getTime())) return '<N/A>';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * The runtime status of an app. `format()` renders TorchX's text layout; `raiseForStatus()` throws unless
 * the app SUCCEEDED.
 *
 * @example
 * ```ts
 * const status = new AppStatus({ state: 'RUNNING', numRestarts: 0 });
 * console.log(status.format());
 * ```
 */
export class AppStatus {
  state: AppState;
  numRestarts: number;
  msg: string;
  structuredErrorMsg: string;
  uiUrl?: string;
  roles: RoleStatus[];
  /** The scheduler's reason for the state and since when (torchx-serverless addition). */
  stateReason?: StateReason;
  /** How each finished attempt ended (torchx-serverless addition). */
  attemptOutcomes?: AttemptOutcome[];

  constructor(init: Pick<AppStatusData, 'state'> & Partial<AppStatusData>) {
    this.state = init.state;
    this.numRestarts = init.numRestarts ?? 0;
    this.msg = init.msg ?? '';
    this.structuredErrorMsg = init.structuredErrorMsg ?? NONE;
    if (init.uiUrl !== undefined) this.uiUrl = init.uiUrl;
    this.roles = init.roles ?? [];
    if (init.stateReason !== undefined) this.stateReason = init.stateReason;
    if (init.attemptOutcomes !== undefined) this.attemptOutcomes = init.attemptOutcomes;
  }

  /** True when the state is terminal. */
  isTerminal(): boolean {
    return isTerminal(this.state);
  }

  /**
   * Throws {@link AppStatusError} unless the state is SUCCEEDED.
   *
   * @throws AppStatusError when the app did not succeed.
   */
  raiseForStatus(): void {
    if (this.state !== 'SUCCEEDED') {
      throw new AppStatusError(this, `job did not succeed: ${this.format()}`);
    }
  }

  /**
   * Renders TorchX's AppStatus text: state, restarts, per-replica lines (`*` marks replica 0 of each role),
   * message, structured error and UI URL.
   *
   * @param filterRoles only show these roles (all when empty or omitted)
   */
  format(filterRoles?: readonly string[]): string {
    const roles =
      filterRoles && filterRoles.length > 0
        ? this.roles.filter((r) => filterRoles.includes(r.role))
        : this.roles;
    const rolesText = roles.map((r) => this.formatRoleStatus(r)).join('');
    // Every value may come from a server or a job: escaped (displayText) so it cannot drive a terminal.
    return APP_STATUS_TEMPLATE({
      state: displayText(this.state),
      numRestarts: displayText(String(this.numRestarts)),
      roles: rolesText,
      msg: displayText(this.msg, 'block'),
      structuredErrorMsg: displayText(this.structuredErrorMsg, 'block'),
      url: displayText(this.uiUrl ?? 'None'),
    });
  }

  /** Plain data for JSON. */
  toJSON(): AppStatusData {
    const data: AppStatusData = {
      state: this.state,
      numRestarts: this.numRestarts,
      msg: this.msg,
      structuredErrorMsg: this.structuredErrorMsg,
      roles: this.roles,
    };
    if (this.uiUrl !== undefined) data.uiUrl = this.uiUrl;
    if (this.stateReason !== undefined) data.stateReason = this.stateReason;
    if (this.attemptOutcomes !== undefined) data.attemptOutcomes = this.attemptOutcomes;
    return data;
  }

  private formatRoleStatus(roleStatus: RoleStatus): string {
    return [...(roleStatus.replicas ?? [])]
      .sort((a, b) => a.id - b.id)
      .map((r) => this.formatReplicaStatus(r))
      .join('');
  }

  private formatReplicaStatus(replica: ReplicaStatus): string {
    let data: string;
    if (replica.structuredErrorMsg !== NONE) {
      const error = readErrorDocument(replica.structuredErrorMsg);
      if (error === undefined) return displayText(replica.structuredErrorMsg, 'block');
      const errorMessage = displayText(formatErrorMessage(error.message, '    error_msg: '), 'block');
      const timestamp = error.timestamp === undefined ? '<N/A>' : pythonLocalTimestamp(error.timestamp);
      data =
        `${displayText(replica.state)} (exitcode: ${displayText(error.exitcode)})\n        timestamp: ${timestamp}\n` +
        `        hostname: ${displayText(replica.hostname)}\n    ${errorMessage}`;
    } else {
      data = displayText(replica.state);
      if (replica.state === 'CANCELLED' || replica.state === 'FAILED') data += ' (no reply file)';
    }
    const header = replica.id === 0 ? '*' : ' ';
    return `\n ${header}${displayText(replica.role)}[${displayText(String(replica.id))}]:${data}`;
  }
}

/** What the AppStatus layout shows of a replica's error document. */
interface ErrorDocumentView {
  message: string;
  /** `<N/A>` when the document has none. */
  exitcode: string;
  /** Epoch seconds, when the document has a usable one. */
  timestamp?: number;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Reads a replica's error document: torchelastic's error file (`{"message": {"message", "errorCode",
 * "extraInfo": {"timestamp"}}}`), the store's cut form of one (`{"truncated": true, "bytes", "head"}`, see
 * the store's bounds), or any other JSON (shown as it is). Undefined when it is not JSON (TorchX then shows
 * the text). Never throws: every field may be missing or of another type.
 */
function readErrorDocument(text: string): ErrorDocumentView | undefined {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (isObject(document) && document.truncated === true && typeof document.head === 'string') {
    return { message: messageOfCutDocument(document.head), exitcode: '<N/A>' };
  }
  const outer = isObject(document) ? document.message : undefined;
  if (!isObject(outer)) {
    return { message: typeof outer === 'string' ? outer : text, exitcode: '<N/A>' };
  }
  const message = typeof outer.message === 'string' ? outer.message : JSON.stringify(outer.message ?? '');
  const code = outer.errorCode;
  const exitcode = code === undefined || code === null || code === 0 || code === '' ? '<N/A>' : String(code);
  const extraInfo = isObject(outer.extraInfo) ? outer.extraInfo : {};
  const seconds = Math.trunc(Number(extraInfo.timestamp));
  return Number.isFinite(seconds) && Math.abs(seconds) < 8.64e12
    ? { message, exitcode, timestamp: seconds }
    : { message, exitcode };
}

const JSON_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/**
 * The error message inside the head of a cut torchelastic document: its JSON string up to the closing
 * quote, or to the end of the head (which then ends with the store's `… [truncated: N bytes]` marker).
 * The head itself when it holds no such message. Escapes are decoded leniently (a cut one stays as text).
 */
function messageOfCutDocument(head: string): string {
  const start = /"message"\s*:\s*\{\s*"message"\s*:\s*"/.exec(head);
  if (start === null) return head;
  const body = /^(?:[^"\\]|\\[\s\S])*/.exec(head.slice(start.index + start[0].length))?.[0] ?? '';
  return body.replace(/\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g, (_, hex: string | undefined, c: string) =>
    hex === undefined ? (JSON_ESCAPES[c] ?? c) : String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/**
 * Word-wraps an error message the way TorchX does: splits at a space once a line reaches `width`
 * characters, the first line prefixed by `header` and the rest by as many spaces. RPC and embedded
 * exception messages are first reduced to their core message.
 */
export function formatErrorMessage(message: string, header: string, width = 80): string {
  let msg = String(message);
  const rpc = RPC_ERROR_MESSAGE.exec(msg);
  if (rpc) msg = rpc[0];
  const embedded = EMBEDDED_ERROR_MESSAGE.exec(msg);
  if (embedded?.[1] !== undefined) msg = embedded[1];
  let prefix = header;
  let length = 0;
  const lines: string[] = [];
  for (let i = 0; i <= msg.length; i++) {
    if (i === msg.length || (msg[i] === ' ' && length >= width)) {
      lines.push(`${prefix}${msg.slice(i - length, i)}`);
      prefix = ' '.repeat(prefix.length);
      length = 0;
    }
    length += 1;
  }
  return lines.join('\n');
}

/**
 * What a scheduler knows about an app (TorchX `DescribeAppResponse`). Build one with
 * {@link makeDescribeAppResponse} to get TorchX's defaults.
 */
export interface DescribeAppResponse {
  appId: string;
  state: AppState;
  /** -1 when unknown. */
  numRestarts: number;
  /** `<NONE>` when the scheduler gave no message. */
  msg: string;
  structuredErrorMsg: string;
  uiUrl?: string;
  metadata: Record<string, string>;
  rolesStatuses: RoleStatus[];
  /** Roles reconstructed from the scheduler, as far as it can. */
  roles: Role[];
  /** When the scheduler last saw the state change (epoch ms), for ordering transitions. */
  updatedAt?: number;
  /** Progress counter with the meaning of `AppStateTransition.attempt` (Batch attempts, SageMaker steps). */
  attempt?: number;
  /** The scheduler's reason for the state, with since-when (torchx-serverless addition). */
  stateReason?: StateReason;
  /** How each finished attempt ended (torchx-serverless addition). */
  attemptOutcomes?: AttemptOutcome[];
}

/**
 * A DescribeAppResponse with TorchX's defaults (`<NOT_SET>` app id, UNSUBMITTED, -1 restarts, `<NONE>` msg).
 */
export function makeDescribeAppResponse(init: Partial<DescribeAppResponse> = {}): DescribeAppResponse {
  return {
    appId: '<NOT_SET>',
    state: 'UNSUBMITTED',
    numRestarts: -1,
    msg: NONE,
    structuredErrorMsg: NONE,
    metadata: {},
    rolesStatuses: [],
    roles: [],
    ...init,
  };
}

/** Converts what a scheduler described into the AppStatus users see (as TorchX's `Runner.status`). */
export function appStatusFromDescribe(desc: DescribeAppResponse): AppStatus {
  const init: Pick<AppStatusData, 'state'> & Partial<AppStatusData> = {
    state: desc.state,
    numRestarts: desc.numRestarts,
    msg: desc.msg,
    structuredErrorMsg: desc.structuredErrorMsg,
    roles: desc.rolesStatuses,
  };
  if (desc.uiUrl !== undefined) init.uiUrl = desc.uiUrl;
  return new AppStatus(init);
}

/** One app in a scheduler's listing (TorchX `ListAppResponse`). */
export interface ListAppResponse {
  appId: string;
  state: AppState;
  /** Filled in by the runner; `<NOT_SET>` from schedulers. */
  appHandle: string;
  name: string;
}
