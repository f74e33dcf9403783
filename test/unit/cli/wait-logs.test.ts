import { afterEach, describe, expect, it } from 'vitest';
import {
  type AppResponse,
  followLogs,
  painter,
  pollDelay,
  selectReplicas,
  TerminalWatch,
  TransitionPrinter,
  TxsClient,
  textLineWriter,
} from '../../../lib/cli/index.js';
import { appResponse, type StubServer, startStubServer } from './helpers.js';

let stub: StubServer | undefined;
afterEach(async () => {
  await stub?.close();
  stub = undefined;
});

function appAt(state: AppResponse['status']['state'], history: AppResponse['history'] = []): AppResponse {
  return appResponse(state, { history });
}

function recorder(isTTY: boolean) {
  let text = '';
  return {
    stream: {
      write: (t: string) => {
        text += t;
      },
      isTTY,
    },
    text: () => text,
  };
}

describe('pollDelay', () => {
  it('polls every second for 30 s, then backs off by half up to 10 s', () => {
    expect(pollDelay(0, 1_000)).toBe(1_000);
    expect(pollDelay(29_000, 1_000)).toBe(1_000);
    expect(pollDelay(31_000, 1_000)).toBe(1_500);
    expect(pollDelay(200_000, 8_000)).toBe(10_000);
  });
});

describe('TransitionPrinter', () => {
  const now = () => Date.parse('2026-01-15T12:00:05Z');

  it('prints every transition of the history, even those between two polls, once', () => {
    const out = recorder(false);
    const printer = new TransitionPrinter(out.stream, now);
    printer.update(
      appAt('SUBMITTED', [{ from: 'UNSUBMITTED', to: 'SUBMITTED', time: '2026-01-15T12:00:00.000Z' }]),
    );
    printer.update(
      appAt('RUNNING', [
        { from: 'UNSUBMITTED', to: 'SUBMITTED', time: '2026-01-15T12:00:00.000Z' },
        { from: 'SUBMITTED', to: 'PENDING', time: '2026-01-15T12:00:01.200Z' },
        { from: 'PENDING', to: 'RUNNING', time: '2026-01-15T12:00:02.500Z' },
      ]),
    );
    printer.update(appAt('RUNNING'));
    expect(out.text()).toBe('    0.0s  SUBMITTED\n    1.2s  PENDING\n    2.5s  RUNNING\n');
  });

  it("puts a reason of several lines on its transition's one line, its control characters still escaped", () => {
    const out = recorder(false);
    const printer = new TransitionPrinter(out.stream, now);
    printer.update(
      appAt('FAILED', [
        {
          from: 'RUNNING',
          to: 'FAILED',
          time: '2026-01-15T12:00:03.000Z',
          reason:
            "python[0] exited with code 3; last lines of python[0]'s stderr:\n  Traceback\n  ValueError: \u001b[2Jbad\n",
        },
      ]),
    );
    expect(out.text()).toBe(
      "    3.0s  FAILED  (python[0] exited with code 3; last lines of python[0]'s stderr: Traceback ValueError: \\u{1B}[2Jbad)\n",
    );
  });

  it('prints the current state when the API sends no history', () => {
    const out = recorder(false);
    const printer = new TransitionPrinter(out.stream, now);
    printer.update(appAt('PENDING'));
    printer.update(appAt('PENDING'));
    expect(out.text()).toBe('    5.0s  PENDING\n');
  });

  it('keeps a live line with the running clock on a terminal, cleared before the next transition', () => {
    const out = recorder(true);
    let clock = Date.parse('2026-01-15T12:00:05Z');
    const printer = new TransitionPrinter(out.stream, () => clock, { live: true });
    printer.update(appAt('RUNNING', [{ from: 'PENDING', to: 'RUNNING', time: '2026-01-15T12:00:01.000Z' }]));
    clock += 2_000;
    printer.redrawLive();
    printer.update(
      appAt('SUCCEEDED', [
        { from: 'PENDING', to: 'RUNNING', time: '2026-01-15T12:00:01.000Z' },
        { from: 'RUNNING', to: 'SUCCEEDED', time: '2026-01-15T12:00:07.000Z' },
      ]),
    );
    expect(out.text()).toBe(
      '    1.0s  RUNNING\n' +
        '\r\u001b[2K    5.0s  RUNNING …' +
        '\r\u001b[2K    7.0s  RUNNING …' +
        '\r\u001b[2K    7.0s  SUCCEEDED\n',
    );
  });
});

describe('selectReplicas', () => {
  const app = {
    name: 'ddp',
    roles: [
      { name: 'trainer', numReplicas: 2 },
      { name: 'ps', numReplicas: 1 },
    ],
    metadata: {},
  } as unknown as Parameters<typeof selectReplicas>[0];

  it('selects every replica of every role, of one role, or the replicas given', () => {
    expect(selectReplicas(app)).toEqual([
      { role: 'trainer', replica: 0 },
      { role: 'trainer', replica: 1 },
      { role: 'ps', replica: 0 },
    ]);
    expect(selectReplicas(app, 'ps')).toEqual([{ role: 'ps', replica: 0 }]);
    expect(selectReplicas(app, 'trainer', [1])).toEqual([{ role: 'trainer', replica: 1 }]);
  });
});

describe('followLogs', () => {
  it('stops following once the app is terminal even if the API keeps a token', async () => {
    let served = 0;
    stub = await startStubServer(() => {
      served += 1;
      return { body: { lines: served === 1 ? ['only line'] : [], nextToken: 't', caughtUp: true } };
    });
    const client = new TxsClient({ endpoint: stub.url });
    const watch = new TerminalWatch();
    let clock = 0;
    const lines: string[] = [];
    await followLogs({
      client,
      handle: 'local_cwd://torchx/echo-1',
      replicas: [{ role: 'echo', replica: 0 }],
      follow: true,
      onLines: (_ref, page) => lines.push(...page),
      sleep: async (ms) => {
        clock += ms;
        if (clock > 3_000) watch.markTerminal(clock);
      },
      now: () => clock,
      terminalWatch: watch,
    });
    expect(lines).toEqual(['only line']);
    const after = stub.requests.filter((_r, i) => i > 0);
    expect(after.every((r) => r.query.get('nextToken') === 't')).toBe(true);
    expect(stub.requests.length).toBeGreaterThan(2);
  });

  it('reads page after page until caught up when not following', async () => {
    stub = await startStubServer((r) => {
      const token = r.query.get('nextToken');
      if (token === null) return { body: { lines: ['a', 'b'], nextToken: 'p2', caughtUp: false } };
      return { body: { lines: ['c'], nextToken: 'p3', caughtUp: true } };
    });
    const written: string[] = [];
    await followLogs({
      client: new TxsClient({ endpoint: stub.url }),
      handle: 'local_cwd://torchx/echo-1',
      replicas: [{ role: 'echo', replica: 0 }],
      follow: false,
      onLines: textLineWriter((t) => written.push(t), painter(false), true),
      sleep: async () => undefined,
      now: () => 0,
      terminalWatch: new TerminalWatch(),
    });
    expect(written.join('')).toBe('echo/0 a\necho/0 b\necho/0 c\n');
    expect(stub.requests.map((r) => r.query.get('limit'))).toEqual(['1000', '1000']);
  });

  for (const follow of [false, true]) {
    it(`follows pages with no matching lines until the log is exhausted (--regex, follow: ${follow})`, async () => {
      // 50 pages of 1,000 lines; a regex matching only the last page leaves 49 empty, not caught-up pages.
      stub = await startStubServer((r) => {
        const page = Number(r.query.get('nextToken') ?? '0');
        if (page < 49) return { body: { lines: [], nextToken: String(page + 1), caughtUp: false } };
        return { body: { lines: ['line 49999'], caughtUp: true } };
      });
      const lines: string[] = [];
      let sleeps = 0;
      await followLogs({
        client: new TxsClient({ endpoint: stub.url }),
        handle: 'local_cwd://torchx/echo-1',
        replicas: [{ role: 'echo', replica: 0 }],
        follow,
        regex: 'line 4999[0-9]',
        onLines: (_ref, page) => lines.push(...page),
        sleep: async () => {
          sleeps += 1;
        },
        now: () => 0,
        terminalWatch: new TerminalWatch(),
      });
      expect(lines).toEqual(['line 49999']);
      expect(stub.requests).toHaveLength(50);
      expect(sleeps).toBe(0); // pages not caught up are read back to back, not polled
      expect(stub.requests.every((r) => r.query.get('regex') === 'line 4999[0-9]')).toBe(true);
    });
  }
});
