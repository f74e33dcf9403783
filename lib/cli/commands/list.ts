/**
 * `txs list`: your apps, newest first (TorchX `cmd_list`).
 *
 * @module
 */
import { type Command, InvalidArgumentError } from 'commander';
import { APP_STATES, type AppState, isAppState } from '../../specs/app-state.js';
import type { AppCountsQuery, AppSummary } from '../api-types.js';
import { formatAppCounts, formatAppList } from '../format.js';
import { addCommonOptions, type CommonOptions, type Invocation } from '../invocation.js';
import { parseTimeArg } from '../time.js';

interface ListOptions extends CommonOptions {
  scheduler?: string;
  state?: AppState[];
  session?: string;
  since?: string;
  limit: number;
  owner?: string;
  counts?: boolean;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function collectStates(value: string, previous: AppState[] | undefined): AppState[] {
  const states = value
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter((s) => s !== '');
  for (const s of states) {
    if (!isAppState(s))
      throw new InvalidArgumentError(`${s} is not a state; use one of ${APP_STATES.join(', ')}`);
  }
  return [...(previous ?? []), ...(states as AppState[])];
}

/** Adds `list` to `program`. */
export function registerList(program: Command, invocation: Invocation): void {
  addCommonOptions(
    program
      .command('list')
      .summary('list your apps, newest first')
      .option('-s, --scheduler <name>', 'only apps of this scheduler')
      .option('--state <states>', 'only apps in these states (comma-separated or repeated)', collectStates)
      .option('--session <name>', 'only apps of this session')
      .option('--since <time>', 'only apps created since: ISO-8601, epoch ms, or a duration ago (1d)')
      .option('--limit <n>', 'show at most this many apps', positiveInt, 50)
      .option('--owner <owner>', "deployment admins: 'all' for every owner's apps, or one owner's")
      .option('--counts', 'how many apps are in each state, counted by the server, instead of the apps'),
  ).action(async (options: ListOptions) => {
    await listCommand(invocation, options);
  });
}

async function listCommand(invocation: Invocation, options: ListOptions): Promise<void> {
  const client = await invocation.client(options);
  const since =
    options.since === undefined ? undefined : parseTimeArg(options.since, '--since', invocation.io.now());
  const filters: AppCountsQuery = {
    ...(options.scheduler === undefined ? {} : { scheduler: options.scheduler }),
    ...(options.session === undefined ? {} : { session: options.session }),
    ...(since === undefined ? {} : { since }),
    ...(options.owner === undefined ? {} : { owner: options.owner }),
  };
  if (options.counts) {
    const result = await client.countApps(filters);
    if (options.json) {
      invocation.json(result);
      return;
    }
    invocation.out(formatAppCounts(result, options.state));
    if (!result.complete) {
      invocation.err('(the server stopped counting at its cap: each count is a lower bound)');
    }
    return;
  }
  const apps: AppSummary[] = [];
  let nextToken: string | undefined;
  do {
    const page = await client.listApps({
      ...filters,
      ...(options.state === undefined ? {} : { states: options.state }),
      limit: Math.min(100, options.limit - apps.length),
      ...(nextToken === undefined ? {} : { nextToken }),
    });
    apps.push(...page.apps.slice(0, options.limit - apps.length));
    nextToken = page.nextToken;
  } while (nextToken !== undefined && apps.length < options.limit);
  if (options.json) {
    invocation.json(nextToken === undefined ? { apps } : { apps, nextToken });
    return;
  }
  if (apps.length === 0) {
    invocation.err('no apps');
    return;
  }
  invocation.out(formatAppList(apps));
  if (nextToken !== undefined) invocation.err(`(more apps: raise --limit above ${options.limit})`);
}
