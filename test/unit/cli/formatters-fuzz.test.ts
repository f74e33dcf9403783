/**
 * Every CLI formatter over what the API may answer (generated from the response schemas, see
 * test/helpers/api-arbitraries.ts): none throws, and none lets a server's or a job's text drive the terminal.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AppResponse } from '../../../lib/cli/api-types.js';
import {
  formatAppCounts,
  formatAppList,
  formatBuiltin,
  formatBuiltinList,
  formatDryRun,
  formatRunOpts,
  formatStatus,
  formatYaml,
  painter,
} from '../../../lib/cli/format.js';
import { logLineForTerminal, TERMINAL_CONTROLS } from '../../../lib/cli/terminal-text.js';
import { TransitionPrinter } from '../../../lib/cli/wait.js';
import {
  appCountsResponseSchema,
  appStatusSchema,
  appSummarySchema,
  componentDescriptionSchema,
  historyEntrySchema,
  schedulersResponseSchema,
} from '../../../lib/specs/api.js';
import { AppStatus, type AppStatusData } from '../../../lib/specs/status.js';
import {
  anyJsonObject,
  anyText,
  appCounts,
  appResponse,
  appSummary,
  componentDescription,
  dryRunResponse,
  HOSTILE_TEXT,
  schedulerInfo,
} from '../../helpers/api-arbitraries.js';

const RUNS = { numRuns: 300, seed: 20261127 };

// What reaches a terminal may hold newlines and tabs, never another control or format character.
const DRIVES_TERMINAL = /[^\P{Cc}\n\t]|[\p{Cf}\p{Zl}\p{Zp}]/u;
const OWN = new RegExp(
  Object.values(TERMINAL_CONTROLS)
    .map((c) => c.replace(/[[\]\\]/g, '\\$&'))
    .join('|'),
  'gu',
);

function expectInert(text: string): void {
  expect(text).not.toMatch(DRIVES_TERMINAL);
}

describe('response arbitraries', () => {
  it('generate payloads the response schemas accept', () => {
    fc.assert(
      fc.property(appResponse, appSummary, appCounts, (app, summary, counts) => {
        expect(appStatusSchema.safeParse(app.status).success).toBe(true);
        for (const entry of app.history ?? []) expect(historyEntrySchema.safeParse(entry).success).toBe(true);
        expect(appSummarySchema.safeParse(summary).success).toBe(true);
        expect(appCountsResponseSchema.safeParse(counts).success).toBe(true);
      }),
      { ...RUNS, numRuns: 100 },
    );
    fc.assert(
      fc.property(schedulerInfo, componentDescription, (scheduler, component) => {
        expect(schedulersResponseSchema.safeParse({ schedulers: [scheduler] }).success).toBe(true);
        expect(componentDescriptionSchema.safeParse(component).success).toBe(true);
      }),
      { ...RUNS, numRuns: 100 },
    );
  });
});

describe('CLI formatters over any API answer', () => {
  it('txs status (formatStatus, AppStatus.format) never throws and prints no control character', () => {
    fc.assert(
      fc.property(appResponse, fc.array(anyText, { maxLength: 2 }), (app, roles) => {
        const view = app as unknown as AppResponse;
        expectInert(formatStatus(view));
        expectInert(formatStatus(view, roles));
        expectInert(new AppStatus(app.status as AppStatusData).format());
      }),
      RUNS,
    );
  });

  it('txs list and the counts table never throw and print no control character', () => {
    fc.assert(
      fc.property(fc.array(appSummary, { maxLength: 5 }), appCounts, (apps, counts) => {
        const table = formatAppList(apps as never);
        expectInert(table);
        expect(table.split('\n')).toHaveLength(apps.length + 2);
        expectInert(formatAppCounts(counts as never));
      }),
      RUNS,
    );
  });

  it('txs describe (formatYaml) never throws and prints no control character', async () => {
    await fc.assert(
      fc.asyncProperty(appResponse, anyJsonObject, async (app, json) => {
        expectInert(await formatYaml(app.app));
        expectInert(await formatYaml(app));
        expectInert(await formatYaml(json));
      }),
      RUNS,
    );
  });

  it("dry runs, runopts and builtins never throw and carry only the CLI's own colours", async () => {
    await fc.assert(
      fc.asyncProperty(
        dryRunResponse,
        fc.array(schedulerInfo, { maxLength: 3 }),
        fc.array(componentDescription, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        async (dryrun, schedulers, components, colour) => {
          expectInert(await formatDryRun(dryrun as never));
          expectInert(formatRunOpts(schedulers as never, painter(colour)).replace(OWN, ''));
          expectInert(formatBuiltinList(components as never));
          for (const component of components) expectInert(formatBuiltin(component as never));
        },
      ),
      RUNS,
    );
  });

  it("--wait lines never throw and carry only the CLI's own controls", () => {
    fc.assert(
      fc.property(fc.array(appResponse, { minLength: 1, maxLength: 3 }), fc.boolean(), (answers, live) => {
        let written = '';
        const printer = new TransitionPrinter({ write: (t) => (written += t), isTTY: live }, () => 1e12, {
          live,
        });
        for (const answer of answers) printer.update(answer as unknown as AppResponse);
        printer.clearLive();
        expectInert(written.replace(OWN, ''));
      }),
      RUNS,
    );
  });

  it('txs log lines on a terminal never carry a control character', () => {
    fc.assert(
      fc.property(anyText, (line) => {
        expect(logLineForTerminal(line)).not.toMatch(/[^\P{Cc}\t\n]/u);
      }),
      RUNS,
    );
  });
});

describe('replica error documents', () => {
  it('shows the message of a torchelastic error file the store cut to its bound (it crashed before)', () => {
    const traceback = `Traceback (most recent call last):\n${'  File "train.py", line 1, in <module>\n'.repeat(60)}ValueError: bad`;
    const document = JSON.stringify({
      message: { message: traceback, errorCode: 1, extraInfo: { timestamp: 1_700_000_000 } },
    });
    // The store's own cut (lib/store/bounds.ts), as `txs status` receives it.
    const cut = `{"truncated":true,"bytes":${document.length},"head":${JSON.stringify(`${document.slice(0, 900)} … [truncated: ${document.length} bytes]`)}}`;
    const text = formatStatus({
      status: {
        state: 'FAILED',
        numRestarts: 0,
        msg: '',
        structuredErrorMsg: '<NONE>',
        roles: [
          {
            role: 'trainer',
            replicas: [{ id: 0, state: 'FAILED', role: 'trainer', hostname: 'h', structuredErrorMsg: cut }],
          },
        ],
      },
    });
    expect(text).toContain('trainer[0]:FAILED (exitcode: <N/A>)');
    expect(text).toContain('error_msg: Traceback (most recent call last):');
    expect(text).toContain(`[truncated: ${document.length} bytes]`);
  });

  it.each(HOSTILE_TEXT.filter((t) => t !== '' && t !== '<NONE>'))(
    'escapes %j in every status field',
    (hostile) => {
      const text = formatStatus({
        status: {
          state: 'FAILED',
          numRestarts: 0,
          msg: hostile,
          structuredErrorMsg: hostile,
          uiUrl: hostile,
          roles: [
            {
              role: hostile,
              replicas: [
                {
                  id: 0,
                  state: 'FAILED',
                  role: hostile,
                  hostname: hostile,
                  structuredErrorMsg: JSON.stringify({ message: { message: hostile, errorCode: hostile } }),
                },
              ],
            },
          ],
        },
      });
      expectInert(text);
    },
  );
});
