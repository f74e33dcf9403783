import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUiProxy } from '../../lib/cli/ui-proxy.js';
import { readProcNet } from '../../lib/local/access.js';
import type { LocalServer } from '../../lib/local/server.js';
import { makeAppDef, makeAppHandle, makeRole } from '../../lib/specs/index.js';

/** Debian's Chromium, with no network of its own (no downloads, no updates, no sync). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Waits for a page condition; generous, as a loaded 2-core machine can take seconds to submit a job. */
const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 20_000, interval: 100 });

let server: LocalServer;
let browser: Browser;
let page: Page;
let dataDir: string;
let profileDir: string;
let trainer: { scheduler: string; appId: string };
let quick: { scheduler: string; appId: string };
/** When true, the server finds no /proc/net/tcp (as on macOS and Windows): a browser cannot prove its user. */
let noProc = false;

async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
}

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return (await res.json()) as T;
}

function appDef(name: string, program: string) {
  return { name, roles: [{ name, image: dataDir, entrypoint: 'python3', args: ['-u', '-c', program] }] };
}

async function waitForState(app: { scheduler: string; appId: string }, states: string[]): Promise<void> {
  for (;;) {
    const got = await api<{ status: { state: string } }>(
      'GET',
      `/v1/apps/${app.scheduler}/${encodeURIComponent(app.appId)}`,
    );
    if (states.includes(got.status.state)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'txs-ui-'));
  profileDir = mkdtempSync(join(tmpdir(), 'txs-ui-chromium-'));
  const { startLocalServer } = await import('../../lib/local/server.js');
  server = await startLocalServer({
    port: 0,
    dataDir,
    inMemory: true,
    reconcileEveryMs: 0,
    tokenFile: join(dataDir, 'token'),
    // The server's own seam for the peer-uid lookup: with noProc, every table reads empty.
    readProcNet: async (family) => (noProc ? [''] : readProcNet(family)),
  });
  quick = await api('POST', '/v1/apps', {
    scheduler: 'local_cwd',
    app: appDef('quick', 'print("hello from quick")'),
  });
  trainer = await api('POST', '/v1/apps', {
    scheduler: 'local_cwd',
    session: 'nightly',
    app: appDef(
      'trainer',
      'import time\nfor i in range(100000):\n    print(f"step {i} loss={1/(i+1):.4f}", flush=True)\n    time.sleep(0.05)',
    ),
  });
  await waitForState(quick, ['SUCCEEDED']);
  await waitForState(trainer, ['RUNNING']);
  // A fresh profile, launched as a persistent context so --user-data-dir is ours.
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1366, height: 820 },
    acceptDownloads: true,
  });
  browser = context.browser() ?? (context as unknown as Browser);
  page = context.pages()[0] ?? (await context.newPage());
  // The page reaches nothing but loopback servers started here.
  await context.route(
    (url) => url.hostname !== '127.0.0.1',
    (route) => route.abort(),
  );
  (globalThis as { __ctx?: unknown }).__ctx = context;
});

afterAll(async () => {
  await ((globalThis as { __ctx?: { close(): Promise<void> } }).__ctx?.close() ?? browser?.close());
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(profileDir, { recursive: true, force: true });
});

describe('the dashboard in Chromium', () => {
  it('lists the apps with counts per state, admitted as the same OS user without a token', async () => {
    await page.goto(`${server.url}/`);
    await eventually(() => page.locator('tr[data-handle]').count()).toBe(2);
    await eventually(() => page.locator('.counts').innerText()).toContain('RUNNING 1');
    expect(await page.locator('.counts').innerText()).toContain('SUCCEEDED 1');
    expect(await page.locator('.counts').innerText()).toContain('2 apps in all');
    expect(await page.locator(`tr[data-handle$="${quick.appId}"]`).innerText()).toContain('SUCCEEDED');
  });

  it('filters by state and session, keeping the filters in the URL', async () => {
    await page.selectOption('#f-state', 'RUNNING');
    await eventually(() => page.url()).toContain('state=RUNNING');
    await eventually(() => page.locator('tr[data-handle]').count()).toBe(1);
    expect(await page.locator('tr[data-handle]').innerText()).toContain('trainer');
    // A reload keeps the filter.
    await page.goto(`${server.url}/#/?session=torchx`);
    await eventually(() => page.locator('tr[data-handle]').count()).toBe(1);
    expect(await page.locator('tr[data-handle]').innerText()).toContain('quick');
    expect(await page.inputValue('#f-session')).toBe('torchx');
  });

  it('pages through the list with the server’s nextToken', async () => {
    await page.goto(`${server.url}/#/?limit=1`);
    await eventually(() => page.locator('tr[data-handle]').innerText()).toContain('trainer');
    await page.click('text=Older →');
    await eventually(() => page.locator('tr[data-handle]').innerText()).toContain('quick');
    expect(await page.locator('button:has-text("Older →")').isDisabled()).toBe(true);
    await page.click('text=← Newer');
    await eventually(() => page.locator('tr[data-handle]').innerText()).toContain('trainer');
  });

  it('counts every app on the server, not the page shown, and a click on a count filters by its state', async () => {
    await page.goto(`${server.url}/#/?limit=1`);
    await eventually(() => page.locator('tr[data-handle]').count()).toBe(1);
    await eventually(() => page.locator('.counts').innerText()).toContain('2 apps in all');
    expect(await page.locator('.counts').innerText()).toContain('RUNNING 1');
    expect(await page.locator('.counts').innerText()).toContain('SUCCEEDED 1');
    await page.click('.counts button:has-text("SUCCEEDED")');
    await eventually(() => page.url()).toContain('state=SUCCEEDED');
    await eventually(() => page.locator('tr[data-handle]').innerText()).toContain('quick');
    // The counts still show every state (one can be picked), the chosen one pressed; a second click clears it.
    await eventually(() => page.locator('.counts button[aria-pressed="true"]').innerText()).toContain(
      'SUCCEEDED',
    );
    expect(await page.locator('.counts').innerText()).toContain('RUNNING 1');
    await page.click('.counts button[aria-pressed="true"]');
    await eventually(() => page.url()).not.toContain('state=');
    // The session filter applies to the counts too.
    await page.goto(`${server.url}/#/?session=nightly`);
    await eventually(() => page.locator('.counts').innerText()).toContain('1 app matches the filters');
    expect(await page.locator('.counts').innerText()).not.toContain('SUCCEEDED');
  });

  it('says when the server stopped counting at its cap: every number is a lower bound', async () => {
    // The cap (10,000 records read) is tested against the real store; here the page gets a capped answer.
    await page.route('**/v1/apps/counts?*', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ counts: { RUNNING: 6500, FAILED: 3500 }, counted: 10_000, complete: false }),
      }),
    );
    try {
      await page.goto(`${server.url}/#/?scheduler=local_cwd`);
      await eventually(() => page.locator('.counts').innerText()).toContain('10,000+ apps');
      const text = await page.locator('.counts').innerText();
      expect(text).toContain('RUNNING 6,500+');
      expect(text).toContain('FAILED 3,500+');
      expect(text).toContain('lower bound');
    } finally {
      await page.unroute('**/v1/apps/counts?*');
    }
  });

  it('shows an API error as the API words it', async () => {
    await page.goto(`${server.url}/#/?since=not-a-time`);
    await eventually(() => page.locator('.error').count()).toBe(1);
    const text = await page.locator('.error').innerText();
    expect(text).toContain('ValidationFailed (400)');
    expect(text).toContain('since');
  });

  it('shows an app’s timeline, replica grid and the dry-run request it became', async () => {
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(trainer.appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('RUNNING');
    await eventually(() => page.locator('.timeline li').count()).toBeGreaterThan(0);
    expect(await page.locator('.timeline').innerText()).toMatch(/RUNNING/);
    expect(await page.locator('[data-replica="trainer/0"]').innerText()).toContain('RUNNING');
    await eventually(() => page.locator('.dryrun pre').last().innerText()).toContain('"replicas"');
    expect(await page.locator('.dryrun pre').last().innerText()).toContain(trainer.appId.split('-')[0] ?? '');
    // The README's screenshot: written into docs/ only when asked (TXS_UPDATE_SCREENSHOT=1), so a test run
    // leaves the working tree as it was; otherwise it is still taken, into the temp directory.
    const shot =
      process.env.TXS_UPDATE_SCREENSHOT === '1' ? 'docs/dashboard.png' : join(tmpdir(), 'txs-dashboard.png');
    expect((await page.screenshot({ path: shot, fullPage: false })).length).toBeGreaterThan(10_000);
  });

  it('follows a running app’s log and highlights and jumps between regex matches without hiding lines', async () => {
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(trainer.appId)}`);
    await page.click('a.button:has-text("Logs")');
    await eventually(() => page.locator('pre.log').innerText()).toContain('step 1 ');
    const first = (await page.locator('pre.log .line').count()) as number;
    await expect.poll(() => page.locator('pre.log .line').count()).toBeGreaterThan(first);
    expect(await page.locator('#l-follow').isChecked()).toBe(true);
    await page.fill('#l-search', 'loss=0\\.0[0-9]');
    await page.press('#l-search', 'Enter');
    await eventually(() => page.locator('mark').count()).toBeGreaterThan(0);
    expect(await page.locator('mark.current').count()).toBe(1);
    // Context stays: lines without a match are still shown.
    expect(await page.locator('pre.log').innerText()).toContain('loss=1.0000');
    expect(await page.locator('text=/\\d+ of \\d+/').count()).toBe(1);
  });

  it('cancels an app after a confirmation', async () => {
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(trainer.appId)}`);
    // Keyboard: Tab to the button, Enter opens the confirmation, Escape keeps the app.
    await page.locator('button:has-text("Cancel…")').focus();
    await page.keyboard.press('Enter');
    await eventually(() => page.locator('dialog[open]').count()).toBe(1);
    await page.keyboard.press('Escape');
    await eventually(() => page.locator('dialog').count()).toBe(0);
    await page.click('button:has-text("Cancel…")');
    await page.click('dialog button:has-text("Keep it")');
    expect(await page.locator('h1').innerText()).toContain('RUNNING');
    await page.click('button:has-text("Cancel…")');
    await page.click('dialog button:has-text("Cancel app")');
    await eventually(() => page.locator('h1').innerText()).toContain('CANCELLED');
    expect(await page.locator('.timeline').innerText()).toContain('CANCELLED');
  });

  it('relaunches an app: the dry run first, then a new app under a new Idempotency-Key', async () => {
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(quick.appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('SUCCEEDED');
    await page.click('button:has-text("Relaunch…")');
    await expect
      .poll(() => page.locator('dialog .dryrun pre').last().innerText())
      .toContain('hello from quick');
    await page.click('dialog button:has-text("Submit")');
    await eventually(() => page.url()).not.toContain(encodeURIComponent(quick.appId));
    await eventually(() => page.locator('h1').innerText()).toContain('SUCCEEDED');
    const list = await api<{ apps: Array<{ name: string }> }>('GET', '/v1/apps');
    expect(list.apps.filter((a) => a.name === 'quick')).toHaveLength(2);
  });

  it('relaunches saying the env values were not kept, and runs with the variables given again', async () => {
    const first = await api<{ scheduler: string; appId: string }>('POST', '/v1/apps', {
      scheduler: 'local_cwd',
      app: appDef('envy', 'import os; print("GREETING is", os.environ.get("GREETING", "unset"))'),
      cfg: { env: { GREETING: 'secret-first', PATH: process.env.PATH ?? '/usr/bin:/bin' } },
    });
    await waitForState(first, ['SUCCEEDED', 'FAILED']);
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(first.appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('SUCCEEDED');
    await page.click('button:has-text("Relaunch…")');
    await eventually(() => page.locator('dialog').innerText()).toContain(
      'Environment values are never stored',
    );
    expect(await page.locator('dialog').innerText()).not.toContain('secret-first');
    await page.fill('#relaunch-env', `GREETING=again\nPATH=${process.env.PATH ?? '/usr/bin:/bin'}`);
    await page.click('dialog button:has-text("Submit")');
    await eventually(() => page.url()).not.toContain(encodeURIComponent(first.appId));
    const appId = decodeURIComponent(page.url().split('/').pop() ?? '');
    await waitForState({ scheduler: 'local_cwd', appId }, ['SUCCEEDED', 'FAILED']);
    const logs = await api<{ lines: string[] }>(
      'GET',
      `/v1/apps/local_cwd/${encodeURIComponent(appId)}/logs?role=envy&replica=0`,
    );
    expect(logs.lines.join('\n')).toContain('GREETING is again');
  });

  it('composes an app from a component and run options, shows its dry run, and runs it', async () => {
    await page.goto(`${server.url}/#/new`);
    await eventually(() => page.locator('#c-component option').count()).toBeGreaterThan(3);
    await page.selectOption('#c-component', 'utils.echo');
    await page.fill('input[data-arg="msg"]', 'from the composer');
    await page.fill('input[data-arg="image"]', dataDir);
    await page.selectOption('#c-scheduler', 'local_cwd');
    await page.click('button:has-text("Dry run")');
    await eventually(() => page.locator('.dryrun').innerText()).toContain('from the composer');
    await page.click('button.primary:has-text("Run")');
    await eventually(() => page.url()).toContain('#/app/local_cwd/');
    await eventually(() => page.locator('h1').innerText()).toContain('SUCCEEDED');
  });

  it('shows the API’s words when the composer’s request is refused', async () => {
    await page.goto(`${server.url}/#/`);
    await page.goto(`${server.url}/#/new`);
    await eventually(() => page.locator('#c-scheduler option').count()).toBeGreaterThan(0);
    await page.fill('#c-appdef', '{"name": "x", "roles": [{"name": "r", "image": "i"}]}');
    await page.click('button:has-text("Dry run")');
    await eventually(() => page.locator('.error').innerText()).toContain('app.roles.0.entrypoint');
  });

  it('works the same through txs ui: the one-time link becomes a cookie, and the page lists the apps', async () => {
    // The proxy in front of the local server (its token stands in for the SigV4 signature).
    const proxy = await startUiProxy({
      upstream: server.url,
      headers: { authorization: `Bearer ${server.token}` },
    });
    try {
      await page.goto(proxy.url);
      await eventually(() => page.url()).toBe(`http://127.0.0.1:${proxy.port}/`);
      await eventually(() => page.locator('tr[data-handle]').count()).toBeGreaterThanOrEqual(3);
      const cookies = await page.context().cookies(`http://127.0.0.1:${proxy.port}/`);
      expect(cookies.find((c) => c.name === `txs_ui_${proxy.port}`)).toMatchObject({
        httpOnly: true,
        sameSite: 'Strict',
      });
      // The page cannot read the session cookie, and the link does not work twice.
      expect(await page.evaluate('document.cookie')).toBe('');
      const again = await page.goto(proxy.url);
      expect(again?.status()).toBe(401);
    } finally {
      await proxy.close();
    }
  });

  it('explains why a pending app waits, in plain words and with what to check (Batch’s statusReason)', async () => {
    // A Batch job stuck in RUNNABLE, as its state-change event records it: through the real store, in the
    // server's own table (dynalite), owned by this OS user.
    const reason =
      'MISCONFIGURATION:JOB_RESOURCE_REQUIREMENT - The job resource requirement (vCPU/memory/GPU) is higher ' +
      'than that can be met by the CE(s) attached to the job queue.';
    // The server runs in this process: its own store writes through the in-process DynamoDB handler (no
    // socket), which also keeps the server's record cache coherent.
    const { store: serverStore } = await import('../../functions/shared/container.js');
    const store = serverStore();
    const appId = 'gpu-queue:big-trainer-x7q2';
    const handle = makeAppHandle('aws_batch', 'torchx', appId);
    const role = makeRole({
      name: 'trainer',
      image: 'pytorch/pytorch:2.5',
      entrypoint: 'python',
      args: ['train.py'],
    });
    await store.records.create({
      handle,
      scheduler: 'aws_batch',
      session: 'torchx',
      appId,
      nativeName: 'big-trainer-x7q2',
      owner: userInfo().username,
      name: 'big-trainer',
      app: makeAppDef({ name: 'big-trainer', roles: [role] }),
      cfg: { queue: 'gpu-queue' },
      state: 'SUBMITTED',
      createdAt: Date.now(),
    });
    await store.records.transition(handle, {
      state: 'PENDING',
      attempt: 0,
      eventTime: Date.now(),
      source: 'event',
      reason,
    });

    await page.goto(`${server.url}/#/app/aws_batch/${encodeURIComponent(appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('PENDING');
    const hint = await page.locator('.hint').innerText();
    expect(hint).toContain('Waiting to run.');
    expect(hint).toContain(
      'No compute environment of the queue has instances big enough for this job’s resources.',
    );
    expect(hint).toContain(
      'What to check: Compare the role’s cpu, memory and gpu with the compute environment’s',
    );
    expect(hint).toContain(`Scheduler’s words: ${reason}`);
    // A running app has no hint.
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(quick.appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('SUCCEEDED');
    expect(await page.locator('.hint').count()).toBe(0);
  });

  it('shows the scheduler’s reason with its code and since-when, and an attempt the host’s end cut short', async () => {
    const { store: serverStore } = await import('../../functions/shared/container.js');
    const store = serverStore();
    const appId = 'gpu-queue:spot-trainer-r8k1';
    const handle = makeAppHandle('aws_batch', 'torchx', appId);
    await store.records.create({
      handle,
      scheduler: 'aws_batch',
      session: 'torchx',
      appId,
      nativeName: 'spot-trainer-r8k1',
      owner: userInfo().username,
      name: 'spot-trainer',
      app: makeAppDef({
        name: 'spot-trainer',
        roles: [makeRole({ name: 'trainer', image: 'x', entrypoint: 'python' })],
      }),
      cfg: { queue: 'gpu-queue' },
      state: 'SUBMITTED',
      createdAt: Date.now(),
    });
    const since = new Date(Date.now() - 40 * 60_000).toISOString();
    await store.records.transition(handle, {
      state: 'PENDING',
      attempt: 1,
      eventTime: Date.now(),
      source: 'event',
      stateReason: {
        text: 'Service cannot fulfill the capacity requested for instance type p4d.24xlarge',
        code: 'CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY',
        since,
        source: 'aws_batch',
      },
      attemptOutcomes: [
        { attempt: 1, reason: 'Host EC2 (instance i-0a1b2c3d) terminated.', infrastructure: true },
      ],
    });

    await page.goto(`${server.url}/#/app/aws_batch/${encodeURIComponent(appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('PENDING');
    const reason = page.locator('dd[data-reason-code]');
    expect(await reason.getAttribute('data-reason-code')).toBe('CAPACITY:INSUFFICIENT_INSTANCE_CAPACITY');
    expect(await reason.innerText()).toContain('p4d.24xlarge');
    expect(await reason.locator('time').getAttribute('datetime')).toBe(since);
    expect(await page.locator('ol.attempts li').innerText()).toContain('not the app’s failure');
  });

  it('deletes an app after a confirmation, and keeps it when the confirmation is cancelled', async () => {
    const sleeper = await api<{ scheduler: string; appId: string }>('POST', '/v1/apps', {
      scheduler: 'local_cwd',
      app: appDef('sleeper', 'import time\nwhile True:\n    time.sleep(1)'),
    });
    await waitForState(sleeper, ['RUNNING']);
    const appPath = `/v1/apps/local_cwd/${encodeURIComponent(sleeper.appId)}`;
    await page.goto(`${server.url}/#/app/local_cwd/${encodeURIComponent(sleeper.appId)}`);
    await eventually(() => page.locator('h1').innerText()).toContain('RUNNING');
    await page.click('button:has-text("Delete…")');
    await eventually(() => page.locator('dialog[open]').innerText()).toContain('Delete this app?');
    await page.click('dialog button:has-text("Keep it")');
    await eventually(() => page.locator('dialog').count()).toBe(0);
    // Kept: nothing was asked of the scheduler.
    const kept = await api<{ status: { state: string }; cancelRequestedAt?: string }>('GET', appPath);
    expect(kept.status.state).toBe('RUNNING');
    expect(kept.cancelRequestedAt).toBeUndefined();
    expect(await page.locator('h1').innerText()).toContain('RUNNING');

    await page.click('button:has-text("Delete…")');
    await page.click('dialog button:has-text("Delete app")');
    await eventually(() => page.locator('[role="status"]').innerText()).toContain(
      'Deleted from the scheduler.',
    );
    // Deleting a live app cancels it on the scheduler; its record (and history) stays, as the API documents.
    await eventually(() => page.locator('h1').innerText()).toContain('CANCELLED');
    const gone = await api<{ status: { state: string }; cancelRequestedAt?: string }>('GET', appPath);
    expect(gone.cancelRequestedAt).toEqual(expect.any(String));
  });

  it('lets a browser in by the one-time link where the server cannot read its OS user (macOS, Windows), and out by Log out', async () => {
    await page.goto('about:blank');
    noProc = true;
    // A browser of its own: new connections, no cookies.
    const other = await launchChromium();
    try {
      const context = await other.newContext();
      await context.route(
        (url) => url.hostname !== '127.0.0.1',
        (route) => route.abort(),
      );
      const tab = await context.newPage();
      expect((await tab.goto(`${server.url}/`))?.status()).toBe(401);
      const link = server.newDashboardLink();
      await tab.goto(link);
      await eventually(() => tab.url()).toBe(`${server.url}/`);
      await eventually(() => tab.locator('tr[data-handle]').count()).toBeGreaterThanOrEqual(3);
      const cookies = await context.cookies(`${server.url}/`);
      expect(cookies.find((c) => c.name === `txs_ui_${server.port}`)).toMatchObject({
        httpOnly: true,
        sameSite: 'Strict',
      });
      expect(await tab.evaluate('document.cookie')).toBe('');
      // The link works once.
      expect((await tab.goto(link))?.status()).toBe(401);
      expect(await tab.locator('body').innerText()).not.toContain(
        new URL(link).searchParams.get('token') ?? '?',
      );
      // Log out ends the session: the cookie is cleared and the server refuses the browser again.
      await tab.goto(`${server.url}/`);
      await eventually(() => tab.locator('tr[data-handle]').count()).toBeGreaterThanOrEqual(3);
      await tab.click('#logout');
      await eventually(() => tab.locator('[role="status"]').innerText()).toContain('Logged out.');
      const left = await context.cookies(`${server.url}/`);
      expect(left.find((c) => c.name === `txs_ui_${server.port}`)).toBeUndefined();
      expect((await tab.goto(`${server.url}/`))?.status()).toBe(401);
    } finally {
      noProc = false;
      await other.close();
    }
  });
});
