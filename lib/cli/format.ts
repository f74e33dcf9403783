/**
 * Human output of the CLI: aligned tables, TorchX's AppStatus layout, YAML-style AppDefs, run options and
 * builtins help.
 *
 * @module
 */
import type { ComponentDescription } from '../components/index.js';
import { APP_STATES, type AppState } from '../specs/app-state.js';
import { displayText } from '../specs/names.js';
import { pythonRepr } from '../specs/run-opts.js';
import { formatAttemptOutcome, formatStateReason } from '../specs/state-reason.js';
import { AppStatus } from '../specs/status.js';
import type {
  AppCountsResponse,
  AppResponse,
  AppSummary,
  DryRunResponse,
  SchedulerInfo,
} from './api-types.js';
import { runOptsFromDescriptions } from './cfg.js';
import { TERMINAL_CONTROLS } from './terminal-text.js';
import { formatElapsed, formatLocalTime } from './time.js';
import { workspaceSummary } from './workspace/progress.js';

const { green: GREEN, red: RED, bold: BOLD, reset: RESET } = TERMINAL_CONTROLS;

/** ANSI colouring, a no-op when `enabled` is false. */
export interface Painter {
  green(text: string): string;
  red(text: string): string;
  bold(text: string): string;
}

/** A {@link Painter} that colours when `enabled`. */
export function painter(enabled: boolean): Painter {
  const wrap = (code: string) => (text: string) => (enabled ? `${code}${text}${RESET}` : text);
  return { green: wrap(GREEN), red: wrap(RED), bold: wrap(BOLD) };
}

/**
 * An aligned table in the layout of Python's `tabulate` "simple" format (used by `torchx list`): headers,
 * a dashed rule under each column, then the rows; columns separated by two spaces, no trailing spaces.
 *
 * @example
 * ```ts
 * formatTable(['APP HANDLE', 'APP STATUS'], [['local_cwd://torchx/echo-k3x9', 'SUCCEEDED']]);
 * ```
 */
export function formatTable(headers: readonly string[], cells: readonly (readonly string[])[]): string {
  // Cells come from the server (handles, names): escaped to one line each, so a table cannot hide or
  // reorder text.
  const rows = cells.map((r) => r.map((cell) => displayText(cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** The `txs list` table: handle, state, name, creation time. */
export function formatAppList(apps: readonly AppSummary[]): string {
  return formatTable(
    ['APP HANDLE', 'APP STATUS', 'NAME', 'CREATED'],
    apps.map((a) => [a.handle, a.state, a.name, formatLocalTime(a.createdAt)]),
  );
}

/**
 * Apps per state as a table, in the order of the states' lifecycle, with the total; counts past the server's
 * cap end with `+` (lower bounds).
 *
 * @example
 * ```ts
 * formatAppCounts({ counts: { RUNNING: 2 }, counted: 2, complete: true });
 * // STATE    APPS
 * // -------  ----
 * // RUNNING  2
 * // total    2
 * ```
 */
export function formatAppCounts(result: AppCountsResponse, states: readonly AppState[] = APP_STATES): string {
  const mark = result.complete ? '' : '+';
  const rows = states
    .filter((state) => result.counts[state] !== undefined)
    .map((state) => [state, `${result.counts[state]}${mark}`]);
  return formatTable(['STATE', 'APPS'], [...rows, ['total', `${result.counted}${mark}`]]);
}

/**
 * TorchX's `AppStatus.format()` for the app, optionally only for some roles, followed by the scheduler's
 * reason for the state with since-when (`Reason: for 40m00s: CAPACITY:…`) and how each finished attempt
 * ended (an attempt the infrastructure ended is marked as not the app's failure).
 *
 * @param now epoch ms, for how long the reason has held
 * @example
 * ```ts
 * formatStatus(await client.getApp(handle)); // 'AppStatus:\n    State: RUNNING\n …'
 * ```
 */
export function formatStatus(
  app: Pick<AppResponse, 'status'>,
  roles?: readonly string[],
  now: number = Date.now(),
): string {
  const status = new AppStatus({
    state: app.status.state,
    numRestarts: app.status.numRestarts,
    msg: app.status.msg,
    structuredErrorMsg: app.status.structuredErrorMsg,
    roles: app.status.roles ?? [],
    ...(app.status.uiUrl === undefined || app.status.uiUrl === null ? {} : { uiUrl: app.status.uiUrl }),
  });
  const lines: string[] = [];
  const reason = app.status.stateReason;
  if (reason !== undefined && reason !== null) {
    lines.push(displayText(`Reason: ${formatStateReason(reason, now, formatElapsed)} (${reason.source})`));
  }
  const attempts = app.status.attemptOutcomes ?? [];
  if (attempts.length > 0)
    lines.push('Attempts:', ...attempts.map((a) => `  ${displayText(formatAttemptOutcome(a))}`));
  const extra = lines.map((line) => `${line}\n    `).join('');
  return `${status.format(roles)}${extra}`;
}

/**
 * The one line that names an app's workspace archive, e.g.
 * `workspace: 3f2a… (12 files, 3.4 KiB)`.
 */
export function formatWorkspaceLine(workspace: { sha256: string; size: number; fileCount: number }): string {
  return `workspace: ${displayText(workspaceSummary(workspace))}`;
}

/**
 * Renders JSON data as YAML the way TorchX prints an AppDef (PyYAML's `yaml.dump`): block style, YAML 1.1
 * scalars — so strings such as `yes`, `.5` or `.inf` are quoted and the numbers `Infinity` and `NaN` read
 * `.inf` and `.nan` — one line per scalar (a newline inside a string is written `\n`), lists indented under
 * their key. The `yaml` library is imported on first use, so commands that print no YAML never load it.
 * Server- and job-provided text is passed through `displayText`.
 *
 * @example
 * ```ts
 * await formatYaml({ name: 'echo', roles: [{ name: 'echo', args: ['hi', '.5'] }] });
 * // 'name: echo\nroles:\n  - name: echo\n    args:\n      - hi\n      - ".5"'
 * ```
 */
export async function formatYaml(value: unknown): Promise<string> {
  const { stringify } = await import('./yaml-writer.js');
  const text = stringify(value ?? null, { version: '1.1', lineWidth: 0, blockQuote: false });
  return displayText(text.replace(/\n$/, ''), 'block');
}

/** `txs runopts`: for each scheduler, its name then TorchX's run options help. */
export function formatRunOpts(schedulers: readonly SchedulerInfo[], paint: Painter): string {
  return schedulers
    .map((s) => {
      const body =
        s.runOpts.length === 0 ? '    (no run options)' : runOptsFromDescriptions(s.runOpts).format();
      return `${paint.green(displayText(s.name))}:\n${displayText(body, 'block')}\n`;
    })
    .join('\n');
}

/** `txs builtins`: TorchX's numbered list, with each component's first sentence. */
export function formatBuiltinList(components: readonly ComponentDescription[]): string {
  const width = Math.max(0, ...components.map((c) => c.name.length));
  const lines = components.map((c, i) => {
    const summary = firstSentence(c.description);
    return ` ${String(i + 1).padStart(2)}. ${c.name.padEnd(width)}${summary ? `  ${summary}` : ''}`.trimEnd();
  });
  return displayText([`Found ${components.length} builtin components:`, ...lines].join('\n'), 'block');
}

/** `txs builtins NAME`: usage line, description and each argument with type, default and help. */
export function formatBuiltin(component: ComponentDescription): string {
  const usage = component.args
    .map((a) => {
      const flag = a.flags[a.flags.length - 1] ?? `--${a.name}`;
      const text = a.type === 'bool' ? flag : `${flag} ${a.name.toUpperCase()}`;
      return a.required ? text : `[${text}]`;
    })
    .join(' ');
  const varargs = component.varargs ? ` [--] [${component.varargs.name} ...]` : '';
  const lines = [
    `usage: txs run ${component.name} ${usage}${varargs}`.trimEnd(),
    '',
    component.description,
    '',
  ];
  const required = component.args.filter((a) => a.required);
  const optional = component.args.filter((a) => !a.required);
  for (const [title, args] of [
    ['required arguments', required],
    ['optional arguments', optional],
  ] as const) {
    if (args.length === 0) continue;
    lines.push(`${title}:`);
    for (const a of args) {
      const defaultText = a.required ? '' : `, default: ${pythonRepr(a.default)}`;
      lines.push(`  ${a.flags.join(', ')} (${a.type}${defaultText})`);
      if (a.help) lines.push(`      ${a.help}`);
    }
    lines.push('');
  }
  if (component.varargs) {
    lines.push('positional arguments:', `  ${component.varargs.name} ...`);
    if (component.varargs.help) lines.push(`      ${component.varargs.help}`);
    lines.push('');
  }
  return displayText(lines.join('\n').trimEnd(), 'block');
}

/** `txs run --dryrun`: TorchX's two sections, the application and the scheduler request. */
export async function formatDryRun(dryrun: DryRunResponse): Promise<string> {
  const request = displayText(dryrun.text ?? JSON.stringify(dryrun.request, null, 2), 'block');
  return `=== APPLICATION ===\n${await formatYaml(dryrun.app)}\n\n=== SCHEDULER REQUEST ===\n${request}`;
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/\.(\s|$)/);
  return end < 0 ? flat : flat.slice(0, end + 1);
}
