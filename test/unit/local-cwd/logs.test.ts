import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidLogTokenError,
  UnknownReplicaError,
  UnknownRoleError,
} from '../../../lib/schedulers/index.js';
import {
  IndexedLogWriter,
  LineInterleaver,
  MAX_LINE_BYTES,
  readLogLines,
} from '../../../lib/schedulers/local-cwd/index.js';
import { compileLogFilter } from '../../../lib/schedulers/log-filter.js';
import { UnknownAppError } from '../../../lib/specs/index.js';
import { type Harness, makeHarness, shApp, waitForLine } from './helpers.js';

describe('LocalCwdScheduler logs', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await makeHarness({ killGracePeriodMs: 300 });
  });
  afterEach(async () => {
    expect(h.errors).toEqual([]);
    await h.cleanup();
  });

  it('pages through a log with small limits and opaque tokens, ending without a token', async () => {
    const appId = await h.scheduler.submit(shApp('pages', 'for i in 1 2 3 4 5; do echo "line $i"; done'));
    await h.scheduler.waitForExit(appId);
    const first = await h.scheduler.readLogs(appId, { role: 'worker', limit: 2 });
    expect(first).toMatchObject({ lines: ['line 1', 'line 2'], caughtUp: false });
    const second = await h.scheduler.readLogs(appId, {
      role: 'worker',
      limit: 2,
      nextToken: first.nextToken as string,
    });
    expect(second.lines).toEqual(['line 3', 'line 4']);
    const third = await h.scheduler.readLogs(appId, {
      role: 'worker',
      limit: 2,
      nextToken: second.nextToken as string,
    });
    expect(third).toEqual({ lines: ['line 5'], caughtUp: true });
  });

  it('applies the regex after reading a page', async () => {
    const appId = await h.scheduler.submit(shApp('regex', 'echo loss=1; echo acc=2; echo loss=3'));
    await h.scheduler.waitForExit(appId);
    expect(
      (await h.scheduler.readLogs(appId, { role: 'worker', filter: compileLogFilter('^loss') })).lines,
    ).toEqual(['loss=1', 'loss=3']);
  });

  it('holds back a line without a newline while the replica runs, and returns it once it ended', async () => {
    const appId = await h.scheduler.submit(shApp('partial', 'printf "done\\npart"; exec sleep 60'));
    await waitForLine(h.scheduler, appId, 'done');
    const running = await h.scheduler.readLogs(appId, { role: 'worker', streams: 'stdout' });
    expect(running.lines).toEqual(['done']);
    expect(running.caughtUp).toBe(true);
    expect(running.nextToken).toBeDefined();
    await h.scheduler.cancel(appId);
    const rest = await h.scheduler.readLogs(appId, {
      role: 'worker',
      streams: 'stdout',
      nextToken: running.nextToken as string,
    });
    expect(rest).toEqual({ lines: ['part'], caughtUp: true });
  });

  it('tails a log with logIter until the app is terminal', async () => {
    const script = 'for i in 1 2 3; do echo "tick $i"; sleep 0.05; done; echo bye >&2';
    const appId = await h.scheduler.submit(shApp('tail', script));
    const lines: string[] = [];
    for await (const line of h.scheduler.logIter(appId, { role: 'worker', tail: true, pollIntervalMs: 10 })) {
      lines.push(line);
    }
    expect(lines).toEqual(['tick 1', 'tick 2', 'tick 3', 'bye']);
    expect((await h.scheduler.describe(appId))?.state).toBe('SUCCEEDED');
  });

  it('rejects an unknown app, role or replica and a token from another query', async () => {
    const appId = await h.scheduler.submit(shApp('errors', 'echo a; echo b', { numReplicas: 2 }));
    await h.scheduler.waitForExit(appId);
    await expect(h.scheduler.readLogs('nope-1', { role: 'worker' })).rejects.toThrow(UnknownAppError);
    await expect(h.scheduler.readLogs(appId, { role: 'ps' })).rejects.toThrow(UnknownRoleError);
    await expect(h.scheduler.readLogs(appId, { role: 'worker', replica: 2 })).rejects.toThrow(
      UnknownReplicaError,
    );
    const page = await h.scheduler.readLogs(appId, { role: 'worker', limit: 1 });
    const token = page.nextToken as string;
    await expect(
      h.scheduler.readLogs(appId, { role: 'worker', replica: 1, nextToken: token }),
    ).rejects.toThrow(InvalidLogTokenError);
    await expect(
      h.scheduler.readLogs(appId, { role: 'worker', streams: 'stderr', nextToken: token }),
    ).rejects.toThrow(InvalidLogTokenError);
    const other = await h.scheduler.submit(shApp('errors', 'echo c'));
    await h.scheduler.waitForExit(other);
    await expect(h.scheduler.readLogs(other, { role: 'worker', nextToken: token })).rejects.toThrow(
      InvalidLogTokenError,
    );
    await expect(h.scheduler.readLogs(appId, { role: 'worker', nextToken: 'garbage' })).rejects.toThrow(
      InvalidLogTokenError,
    );
  });

  it('writes an arrival-time index next to each log file', async () => {
    const appId = await h.scheduler.submit(shApp('index', 'echo one; echo two >&2'));
    await h.scheduler.waitForExit(appId);
    const dir = path.join(h.dataDir, appId, 'worker', '0');
    const index = await readFile(path.join(dir, 'stdout.log.idx'), 'utf8');
    expect(index).toMatch(/^0 \d+\n$/);
    const t = Number(index.split(' ')[1]);
    expect(
      (await h.scheduler.readLogs(appId, { role: 'worker', streams: 'stdout', since: new Date(t) })).lines,
    ).toEqual(['one']);
    expect(
      (await h.scheduler.readLogs(appId, { role: 'worker', streams: 'stdout', since: new Date(t + 1) }))
        .lines,
    ).toEqual([]);
  });
});

describe('readLogLines', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'txs-log-lines-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  /** A log written in three timed writes: "a\nb" at 1000, "c\nd\n" at 2000, "e\n" at 3000. */
  async function timedLog(): Promise<string> {
    const file = path.join(dir, 'stdout.log');
    await writeFile(file, 'a\nbc\nd\ne\n');
    await writeFile(`${file}.idx`, '0 1000\n3 2000\n7 3000\n');
    return file;
  }

  it('filters by the time the first byte of each line arrived', async () => {
    const file = await timedLog();
    const base = { file, offset: 0, limit: 100, complete: true, fallbackTime: 0 };
    expect((await readLogLines({ ...base, since: 2000 })).lines).toEqual(['d', 'e']);
    expect((await readLogLines({ ...base, since: 1500 })).lines).toEqual(['d', 'e']);
    expect((await readLogLines({ ...base, since: 0, until: 2000 })).lines).toEqual(['a', 'bc']);
    const untilEnd = await readLogLines({ ...base, until: 3000 });
    expect(untilEnd).toMatchObject({ lines: ['a', 'bc', 'd'], untilReached: true, caughtUp: true });
  });

  it('returns an incomplete last line only when the file is complete, and strips \\r', async () => {
    const file = path.join(dir, 'out.log');
    await writeFile(file, 'one\r\ntwo');
    const base = { file, offset: 0, limit: 10, fallbackTime: 0 };
    expect(await readLogLines({ ...base, complete: false })).toEqual({
      lines: ['one'],
      nextOffset: 5,
      caughtUp: true,
      untilReached: false,
    });
    expect(await readLogLines({ ...base, offset: 5, complete: true })).toMatchObject({
      lines: ['two'],
      nextOffset: 8,
    });
  });

  it('reads a missing file as empty', async () => {
    const result = await readLogLines({
      file: path.join(dir, 'none.log'),
      offset: 0,
      limit: 5,
      complete: false,
      fallbackTime: 0,
    });
    expect(result).toEqual({ lines: [], nextOffset: 0, caughtUp: true, untilReached: false });
  });
});

describe('LineInterleaver', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'txs-interleave-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('writes whole lines in the order they completed, never splitting one with the other stream', async () => {
    const file = path.join(dir, 'combined.log');
    const writer = new IndexedLogWriter(file);
    const interleaver = new LineInterleaver(writer);
    interleaver.push('stdout', Buffer.from('out-1 par'), 10);
    interleaver.push('stderr', Buffer.from('err-1\n'), 11);
    interleaver.push('stdout', Buffer.from('tial\nout-2\n'), 12);
    interleaver.push('stderr', Buffer.from('no newline'), 13);
    interleaver.flush('stderr');
    await writer.flush();
    expect(await readFile(file, 'utf8')).toBe('err-1\nout-1 partial\nout-2\nno newline\n');
    // err-1 arrived at 11; "out-1 partial" started at 10; out-2 at 12; the flushed line started at 13.
    expect(await readFile(`${file}.idx`, 'utf8')).toBe('0 11\n6 10\n20 12\n26 13\n');
  });

  it('breaks a partial line that exceeds the maximum line size', async () => {
    const file = path.join(dir, 'combined.log');
    const writer = new IndexedLogWriter(file);
    const interleaver = new LineInterleaver(writer);
    interleaver.push('stdout', Buffer.alloc(MAX_LINE_BYTES, 'x'), 1);
    interleaver.push('stdout', Buffer.from('tail\n'), 2);
    await writer.flush();
    const text = await readFile(file, 'utf8');
    expect(text.split('\n').map((l) => l.length)).toEqual([MAX_LINE_BYTES, 4, 0]);
  });
});
