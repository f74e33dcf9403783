/**
 * The dashboard's views over any API answer (generated from the response schemas, see
 * test/helpers/api-arbitraries.ts), run in node on a fake DOM with `fetch` answering the generated
 * payloads: the app page, the apps list, the counts, the stuck-job hint and the relaunch request render
 * to the end without throwing.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppResponse } from '../../../lib/specs/api.js';
import { stuckHint } from '../../../ui/hints.js';
import { appHref, parseRoute } from '../../../ui/route.js';
import { anyText, appCounts, appResponse, appSummary } from '../../helpers/api-arbitraries.js';
import { FakeNode, installFakeDom } from '../../helpers/fake-dom.js';

const RUNS = { numRuns: 60, seed: 20261127 };

// The views are typed against the DOM, which the node type-check (`tsc` at the root) leaves out: they are
// loaded by a path TypeScript does not follow, with the signatures used here (`tsc -p ui` checks them).
type View = (root: unknown, route: ReturnType<typeof parseRoute>) => () => void;
const load = (name: string) =>
  import(/* @vite-ignore */ new URL(`../../../ui/views/${name}.ts`, import.meta.url).href);
const { appView, recordedRequest } = (await load('app')) as {
  appView: View;
  recordedRequest: (app: AppResponse) => { scheduler: string };
};
const { listView } = (await load('list')) as { listView: View };
const { logsView } = (await load('logs')) as { logsView: View };

const dryRunAnswer = fc.record(
  {
    scheduler: anyText,
    app: fc.constant({ name: 'a', roles: [] }),
    cfg: fc.constant({}),
    request: fc.jsonValue({ maxDepth: 3 }),
    text: anyText,
    warnings: fc.array(anyText, { maxLength: 3 }),
  },
  { requiredKeys: ['scheduler', 'app', 'cfg', 'request'] },
);

let uninstall: () => void;
beforeAll(() => {
  uninstall = installFakeDom();
});
afterAll(() => {
  uninstall();
  vi.unstubAllGlobals();
});

/** `fetch` answering each API path with `answers` (by the path's start), recording the paths asked. */
function serve(answers: Record<string, unknown>): string[] {
  const asked: string[] = [];
  vi.stubGlobal('fetch', async (path: string) => {
    asked.push(path);
    const key = Object.keys(answers)
      .sort((a, b) => b.length - a.length)
      .find((prefix) => path.startsWith(prefix));
    const body = JSON.stringify(key === undefined ? {} : answers[key]);
    return { ok: true, status: 200, statusText: 'OK', text: async () => body };
  });
  return asked;
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

describe('dashboard views over any API answer', () => {
  it('the app page renders every answer to the end, then the dry run of its request', async () => {
    await fc.assert(
      fc.asyncProperty(appResponse, dryRunAnswer, async (app, dryrun) => {
        serve({ '/v1/apps/': app, '/v1/dryrun': dryrun });
        const root = new FakeNode('MAIN');
        const stop = appView(root, parseRoute(appHref('aws_batch', 'q:job')));
        // The dry run is asked for by the last line of the page's rendering, and shown when it answers.
        await until(() => root.textContent.includes('Native request ('));
        stop();
        expect(root.textContent).toContain('Roles × replicas');
        expect(root.textContent).toContain('Native request (');
      }),
      RUNS,
    );
  });

  it('the apps list renders every page and its counts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(appSummary, { maxLength: 5 }),
        appCounts,
        anyText,
        async (apps, counts, token) => {
          const asked = serve({
            '/v1/apps?': { apps, nextToken: token },
            '/v1/apps/counts': counts,
            '/v1/schedulers': { schedulers: [] },
          });
          const root = new FakeNode('MAIN');
          const stop = listView(root, parseRoute('#/'));
          await until(
            () => asked.some((p) => p.startsWith('/v1/apps/counts')) && root.textContent.includes(' in all'),
          );
          stop();
          expect(root.textContent).toContain('page 1');
          expect(root.textContent).not.toContain('Counts: ');
        },
      ),
      RUNS,
    );
  });

  it('the logs viewer renders any page of lines and any app it reads roles from', async () => {
    await fc.assert(
      fc.asyncProperty(appResponse, fc.array(anyText, { maxLength: 20 }), async (app, lines) => {
        serve({ '/v1/apps/': app, '/v1/apps/aws_batch/q%3Ajob/logs': { lines, caughtUp: true } });
        const root = new FakeNode('MAIN');
        const stop = logsView(root, parseRoute(appHref('aws_batch', 'q:job', 'logs')));
        await until(() => /end of log|following…/.test(root.textContent));
        stop();
        expect(root.textContent).toMatch(/end of log|following…/);
        for (const line of lines) expect(root.textContent).toContain(line);
      }),
      RUNS,
    );
  });

  it('the stuck-job hint and the relaunch request never throw', () => {
    fc.assert(
      fc.property(appResponse, (app) => {
        const view = app as unknown as AppResponse;
        const hint = stuckHint(view);
        if (hint !== undefined) expect(typeof hint.say).toBe('string');
        expect(recordedRequest(view).scheduler).toBe(app.scheduler);
      }),
      { ...RUNS, numRuns: 300 },
    );
  });

  it('an app link carries any scheduler and app id there and back', () => {
    fc.assert(
      fc.property(anyText, anyText, (scheduler, appId) => {
        const route = parseRoute(appHref(scheduler, appId));
        // Lone surrogates (never in a name the server accepts) are shown as U+FFFD.
        if (scheduler !== '' && appId !== '')
          expect([route.scheduler, route.appId]).toEqual([scheduler.toWellFormed(), appId.toWellFormed()]);
      }),
      { ...RUNS, numRuns: 300 },
    );
  });
});
