/**
 * `txs run --workspace DIR utils.sh true` end to end against the local server, for bench/workspace.ts: the
 * `txs` command as installed (the prebuilt dist/cli/main.js, each run its own process) against a local
 * server started in this process (local_cwd, records in memory, archives in a temporary data directory).
 *
 * - first run: an empty client cache and a server without the archive (walk, hash, pack, upload);
 * - re-run of the unchanged tree (cached archive, one `HEAD`, nothing uploaded) beside the same run without
 *   a workspace, alternately, one of each per round: the difference is the time a workspace adds;
 * - the same two with `--wait`: the job's own start includes unpacking its copy, off the request's path;
 * - the copy mechanisms a run's snapshot could use, on the same archive;
 * - TorchX's `_build_context` of the same tree (bench/torchx-build-context.py): the first step of its Docker
 *   workspace for aws_batch, which it runs on every `torchx run`; the Docker build and push that follow
 *   need a Docker daemon, which this machine does not have.
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { extractWorkspace } from '../../lib/schedulers/local-cwd/workspace-unpack.js';
import { countingProxy, type TimedCommand, timeCommand, VENDOR } from './commands.js';
import { median, msSince, round } from './stats.js';

/** Medians (ms) and samples of the run benchmark. */
export interface RunFigures {
  medianMs: Record<string, number>;
  samplesMs: Record<string, number[]>;
  /** Requests the unchanged re-runs with a workspace made, by method and path (a `PUT` would be an upload). */
  reRunRequests: Record<string, number>;
}

/** Times `txs run` with and without the workspace `tree`; `root` is the checkout, `work` a scratch directory. */
export async function measureRuns(
  root: string,
  tree: string,
  work: string,
  rounds: number,
): Promise<RunFigures> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  const { startLocalServer } = await import('../../lib/local/server.js');
  const dataDir = join(work, 'server');
  const server = await startLocalServer({
    port: 0,
    dataDir,
    inMemory: true,
    reconcileEveryMs: 0,
    schedulers: ['local_cwd'],
    tokenFile: join(work, 'server.token'),
  });
  // A counting pass-through in front of the server: what the re-runs send.
  let counting = false;
  const reRunRequests: Record<string, number> = {};
  const proxy = await countingProxy(server.url, (req) => {
    if (!counting) return;
    // `PUT /v1/workspaces/<sha256>` as `PUT /v1/workspaces/…`: an upload, whatever the archive.
    const route = `${req.method} ${(req.url ?? '').split('?')[0]?.replace(/[0-9a-f]{64}/, '…')}`;
    reRunRequests[route] = (reRunRequests[route] ?? 0) + 1;
  });
  const samples: Record<string, number[]> = {
    'first run (pack + upload)': [],
    're-run, unchanged workspace': [],
    'same run, no workspace': [],
    're-run --wait, unchanged workspace': [],
    'same run --wait, no workspace': [],
  };
  try {
    const env = (cache: string): NodeJS.ProcessEnv => ({
      ...process.env,
      TXS_PREBUILT: '1',
      TXS_ENDPOINT: proxy.url,
      TXS_LOCAL_TOKEN_FILE: server.tokenFile,
      TXS_CONFIG: '/dev/null',
      XDG_CACHE_HOME: cache,
    });
    const txs = (cache: string, ...args: string[]): TimedCommand => ({
      file: process.execPath,
      args: [join(root, 'bin/txs.js'), 'run', ...args],
      env: env(cache),
    });
    const archives = join(dataDir, 'workspaces', 'archives');
    const forgetArchives = () => rmSync(archives, { recursive: true, force: true });

    for (let r = 0; r < rounds; r++) {
      const cache = join(work, `first-${r}`);
      forgetArchives();
      samples['first run (pack + upload)']?.push(
        await timeCommand('first run', txs(cache, '--workspace', tree, 'utils.sh', 'true'), work),
      );
      rmSync(cache, { recursive: true, force: true });
      process.stderr.write(`\rfirst runs ${r + 1}/${rounds}`);
    }
    process.stderr.write('\n');

    // One warm cache and the archive on the server; files older than 2 s (the cache's racy-clean window).
    const cache = join(work, 'cache');
    await timeCommand('warm-up', txs(cache, '--workspace', tree, 'utils.sh', 'true'), work);
    const stored = () => readdirSync(archives).filter((name) => name.endsWith('.tar.gz')).length;
    const before = stored();
    const alternate: Array<[string, TimedCommand]> = [
      ['re-run, unchanged workspace', txs(cache, '--workspace', tree, 'utils.sh', 'true')],
      ['same run, no workspace', txs(cache, 'utils.sh', 'true')],
      ['re-run --wait, unchanged workspace', txs(cache, '--wait', '--workspace', tree, 'utils.sh', 'true')],
      ['same run --wait, no workspace', txs(cache, '--wait', 'utils.sh', 'true')],
    ];
    for (let r = 0; r < rounds * 3; r++) {
      for (const [name, command] of alternate) {
        counting = name === 're-run, unchanged workspace';
        samples[name]?.push(await timeCommand(name, command, work));
        counting = false;
      }
      process.stderr.write(`\rre-runs ${r + 1}/${rounds * 3}`);
    }
    process.stderr.write('\n');
    if (stored() !== before) throw new Error('an unchanged re-run stored another archive');

    // The copy mechanisms, on the stored archive: what one run's snapshot costs.
    const archive = join(archives, readdirSync(archives).find((n) => n.endsWith('.tar.gz')) as string);
    const copies = join(work, 'copies');
    mkdirSync(copies);
    const template = join(copies, 'template');
    await extractWorkspace(archive, template);
    const mechanisms: Record<string, (target: string) => Promise<void> | void> = {
      'unpack (this server: gunzip + tar-stream, JS)': async (target) => {
        await extractWorkspace(archive, target);
      },
      'system tar -xzf of the archive (reference)': (target) => {
        mkdirSync(target);
        const result = spawnSync('tar', ['-xzf', archive, '-C', target]);
        if (result.status !== 0) throw new Error(`tar failed: ${result.stderr}`);
      },
      'cp -a of an unpacked tree (reference)': (target) => {
        const result = spawnSync('cp', ['-a', '--reflink=auto', template, target]);
        if (result.status !== 0) throw new Error(`cp failed: ${result.stderr}`);
      },
    };
    for (const name of Object.keys(mechanisms)) samples[name] = [];
    for (let r = 0; r < rounds; r++) {
      for (const [name, copy] of Object.entries(mechanisms)) {
        const target = join(copies, `copy-${r}`);
        const start = process.hrtime.bigint();
        await copy(target);
        samples[name]?.push(msSince(start));
        rmSync(target, { recursive: true, force: true });
      }
    }
    const torchx = spawnSync(
      '/usr/bin/python3',
      [join(root, 'bench/torchx-build-context.py'), tree, String(rounds)],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          PYTHONPATH: `${join(VENDOR, 'torchx-b72ba03')}:${join(VENDOR, 'docstring_parser')}`,
        },
      },
    );
    if (torchx.status === 0) {
      samples['TorchX _build_context (tar of the workspace; before docker build + push)'] = JSON.parse(
        torchx.stdout,
      ) as number[];
    } else {
      console.error(
        `TorchX's _build_context could not run (see ../shared/vendor/README.md): ${torchx.stderr}`,
      );
    }
  } finally {
    proxy.close();
    await server.close();
  }
  const medianMs = Object.fromEntries(Object.entries(samples).map(([name, v]) => [name, round(median(v))]));
  // What the workspace adds: the median of the differences within each round (the two runs of a round ran
  // one after the other, so load changes between rounds cancel out).
  const added = (withIt: string, without: string) => {
    const other = samples[without] ?? [];
    return round(median((samples[withIt] ?? []).map((ms, i) => ms - (other[i] ?? Number.NaN))));
  };
  medianMs['added by the workspace (re-run)'] = added(
    're-run, unchanged workspace',
    'same run, no workspace',
  );
  medianMs['added by the workspace (re-run --wait)'] = added(
    're-run --wait, unchanged workspace',
    'same run --wait, no workspace',
  );
  return {
    medianMs,
    samplesMs: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map((x) => round(x))])),
    reRunRequests,
  };
}
