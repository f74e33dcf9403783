/** An app's page: state, actions, stuck-job hint, timeline, role × replica grid, the request it became. */

import { workspaceSummary } from '../../lib/cli/workspace/progress.js';
import type { AppResponse } from '../../lib/specs/api.js';
import { shownCode } from '../../lib/specs/state-reason.js';
import { api, errorBox, type RunRequest } from '../api.js';
import { badge, confirmDialog, h, replace, time } from '../dom.js';
import { stuckHint } from '../hints.js';
import { Poller } from '../poll.js';
import { appHref, newKey, type Route, TERMINAL } from '../route.js';
import { dryRunBlock } from './dryrun.js';

/** The request an app was made from: its recorded AppDef, cfg, session and workspace archive. */
export function recordedRequest(app: AppResponse): RunRequest {
  return {
    scheduler: app.scheduler,
    session: app.session,
    app: app.app,
    cfg: app.cfg ?? {},
    ...(app.workspace === undefined ? {} : { workspace: { sha256: app.workspace.sha256 } }),
  };
}

/**
 * Parses `KEY=VALUE` lines (blank lines and `#` comments skipped; the first `=` splits).
 *
 * @throws Error naming the first line that has no `=` or no name.
 */
export function parseEnvLines(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`env line ${index + 1}: write it as NAME=VALUE (got ${line.slice(0, 40)})`);
    env[line.slice(0, eq).trim()] = line.slice(eq + 1);
  }
  return env;
}

/**
 * The scheduler's reason for the state (its code, its words, since when, who said it) and how each finished
 * attempt ended, as `dt`/`dd` pairs of the facts list; nothing when the scheduler gave none.
 */
export function reasonFacts(app: AppResponse): HTMLElement[] {
  const facts: HTMLElement[] = [];
  const reason = app.status.stateReason;
  if (reason) {
    const code = shownCode(reason);
    facts.push(
      h('dt', {}, 'Reason'),
      h(
        'dd',
        { class: 'reason', 'data-reason-code': reason.code ?? '' },
        code ? h('code', {}, code) : null,
        code ? ' ' : null,
        reason.text,
        h('div', { class: 'muted small' }, 'since ', time(reason.since), ` · ${reason.source}`),
      ),
    );
  }
  const attempts = app.status.attemptOutcomes ?? [];
  if (attempts.length > 0) {
    facts.push(
      h('dt', {}, 'Attempts'),
      h(
        'dd',
        {},
        h(
          'ol',
          { class: 'attempts' },
          ...attempts.map((a) =>
            h(
              'li',
              { value: String(a.attempt) },
              a.exitCode !== undefined ? `exit ${a.exitCode}` : 'ended',
              a.reason ? ` — ${a.reason}` : '',
              a.infrastructure
                ? h('strong', { class: 'small' }, ' · ended by the infrastructure, not the app’s failure')
                : null,
            ),
          ),
        ),
      ),
    );
  }
  return facts;
}

/** Renders the app page; returns the clean-up. */
export function appView(root: HTMLElement, route: Route): () => void {
  const scheduler = route.scheduler ?? '';
  const appId = route.appId ?? '';
  const head = h('div', { class: 'app-head' });
  const notice = h('div', { 'aria-live': 'polite' });
  const hint = h('div');
  const grid = h('section', { 'aria-label': 'replicas' });
  const timeline = h('section', { 'aria-label': 'timeline' });
  const request = h(
    'section',
    { 'aria-label': 'request' },
    h('h2', {}, 'The request it became'),
    h(
      'p',
      { class: 'muted small' },
      'A dry run of the recorded AppDef and run options (generated names differ). The values of the run ' +
        'option env are never stored: where the first run sent its environment, this shows the server’s default.',
    ),
  );
  replace(root, head, notice, hint, grid, timeline, request);
  let current: AppResponse | undefined;
  let last = '';
  let dryRunShown = false;

  const act = async (label: string, run: () => Promise<unknown>) => {
    try {
      await run();
      replace(notice, h('div', { class: 'ok', role: 'status' }, label));
    } catch (error) {
      replace(notice, errorBox(error));
    }
    poller.hurry();
  };

  const cancel = async () => {
    if (!(await confirmDialog('Cancel this app?', `${current?.handle} will be stopped.`, 'Cancel app')))
      return;
    await act('Cancel requested.', () => api.cancel(scheduler, appId));
  };
  const remove = async () => {
    const ok = await confirmDialog(
      'Delete this app?',
      `${current?.handle} is removed from the scheduler (and cancelled if live). Its record is kept.`,
      'Delete app',
    );
    if (ok) await act('Deleted from the scheduler.', () => api.remove(scheduler, appId));
  };
  const relaunch = async () => {
    if (!current) return;
    const body = recordedRequest(current);
    const key = newKey();
    const takesEnv = current.cfg !== undefined && Object.hasOwn(current.cfg, 'env');
    const envBox = h('textarea', {
      id: 'relaunch-env',
      rows: 4,
      spellcheck: 'false',
      placeholder: 'NAME=VALUE, one per line',
    });
    const dry = h(
      'div',
      {},
      h('p', {}, 'Dry run of the same request:'),
      h('p', { class: 'muted' }, 'loading…'),
    );
    const content = h(
      'div',
      {},
      current.workspace &&
        h(
          'p',
          { class: 'hint', role: 'note' },
          'It runs in the same workspace archive, ',
          h('code', {}, workspaceSummary(current.workspace)),
          '. The service keeps archives for a limited time: if it no longer holds this one, the relaunch ' +
            'is refused (an error naming workspace.sha256); run it again from your code’s directory with txs run.',
        ),
      takesEnv &&
        h(
          'label',
          { class: 'block', for: 'relaunch-env' },
          h(
            'p',
            { class: 'hint', role: 'note' },
            'Environment values are never stored, so the first run’s environment (the run option env) is not ' +
              'carried over: without lines here, the replicas get only the server’s PATH, HOME and LANG. ' +
              'Give the variables the app needs again:',
          ),
          envBox,
        ),
      dry,
    );
    const pending = confirmDialog('Relaunch this app?', content, 'Submit');
    try {
      replace(dry, h('p', {}, 'Dry run of the same request:'), dryRunBlock(await api.dryrun(body)));
    } catch (error) {
      replace(dry, errorBox(error));
    }
    if (!(await pending)) return;
    try {
      const env = takesEnv ? parseEnvLines(envBox.value) : {};
      if (Object.keys(env).length > 0) body.cfg = { ...body.cfg, env };
      const run = await api.run(body, key);
      location.hash = appHref(run.scheduler, run.appId);
    } catch (error) {
      replace(notice, errorBox(error));
    }
  };

  const render = (app: AppResponse) => {
    const live = !TERMINAL.has(app.status.state);
    replace(
      head,
      h('h1', {}, app.name, ' ', badge(app.status.state)),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Handle'),
        h('dd', {}, h('code', {}, app.handle)),
        h('dt', {}, 'Owner'),
        h('dd', {}, app.owner ?? ''),
        h('dt', {}, 'Created'),
        h('dd', {}, time(app.createdAt)),
        app.workspace && h('dt', {}, 'Workspace'),
        app.workspace && h('dd', {}, h('code', {}, workspaceSummary(app.workspace))),
        app.cancelRequestedAt && h('dt', {}, 'Cancel requested'),
        app.cancelRequestedAt && h('dd', {}, time(app.cancelRequestedAt)),
        app.status.msg && h('dt', {}, 'Message'),
        app.status.msg && h('dd', { class: 'reason' }, app.status.msg),
        ...reasonFacts(app),
      ),
      h(
        'div',
        { class: 'row actions' },
        h('a', { class: 'button', href: appHref(scheduler, appId, 'logs') }, 'Logs'),
        live && h('button', { type: 'button', onclick: cancel }, 'Cancel…'),
        h('button', { type: 'button', onclick: remove }, 'Delete…'),
        h('button', { type: 'button', onclick: relaunch }, 'Relaunch…'),
        app.status.uiUrl &&
          h(
            'a',
            { class: 'button', href: app.status.uiUrl, target: '_blank', rel: 'noopener noreferrer' },
            /^https:\/\/[^/]*console\.aws\.amazon\.com\//.test(app.status.uiUrl)
              ? 'AWS console ↗'
              : 'Scheduler UI ↗',
          ),
      ),
    );
    const stuck = stuckHint(app);
    replace(
      hint,
      stuck &&
        h(
          'div',
          { class: 'hint', role: 'note' },
          h('strong', {}, 'Waiting to run. '),
          stuck.say,
          h('div', {}, h('strong', {}, 'What to check: '), stuck.check),
          stuck.reason && h('div', { class: 'muted small' }, `Scheduler’s words: ${stuck.reason}`),
        ),
    );
    replace(
      grid,
      h('h2', {}, 'Roles × replicas'),
      ...app.status.roles.map((role) =>
        h(
          'div',
          { class: 'role' },
          h('h3', {}, role.role),
          h(
            'div',
            { class: 'replicas' },
            ...role.replicas.map((r) => {
              const q = new URLSearchParams({ role: role.role, replica: String(r.id) });
              return h(
                'div',
                { class: `replica s-${r.state.toLowerCase()}`, 'data-replica': `${role.role}/${r.id}` },
                h('div', { class: 'row' }, h('strong', {}, `#${r.id}`), badge(r.state)),
                r.exitCode !== undefined && h('div', {}, `exit ${r.exitCode}`),
                r.hostname && h('div', { class: 'small' }, r.hostname),
                r.reason && h('div', { class: 'reason small' }, r.reason),
                h('a', { href: appHref(scheduler, appId, 'logs', q), class: 'small' }, 'logs'),
              );
            }),
          ),
        ),
      ),
      app.status.roles.length === 0 && h('p', { class: 'muted' }, 'No replica details yet.'),
    );
    replace(
      timeline,
      h('h2', {}, 'Timeline'),
      h(
        'ol',
        { class: 'timeline' },
        ...(app.history ?? []).map((entry, i) =>
          h(
            'li',
            {},
            time(entry.time),
            ' ',
            badge(entry.from),
            ' → ',
            badge(entry.to),
            entry.source && h('span', { class: 'source' }, entry.source),
            entry.reason && h('div', { class: 'reason small' }, entry.reason),
            i === 4 && app.historyElided
              ? h('div', { class: 'muted' }, `… ${app.historyElided} transitions elided …`)
              : null,
          ),
        ),
      ),
    );
    if (!dryRunShown) {
      dryRunShown = true;
      api.dryrun(recordedRequest(app)).then(
        (result) => request.append(dryRunBlock(result)),
        (error) => request.append(errorBox(error)),
      );
    }
  };

  const load = async (): Promise<boolean> => {
    try {
      const app = await api.app(scheduler, appId);
      current = app;
      const key = JSON.stringify(app);
      if (key === last) return false;
      last = key;
      render(app);
      return true;
    } catch (error) {
      replace(head, h('h1', {}, appId), errorBox(error));
      throw error;
    }
  };
  const poller = new Poller(load);
  poller.start();
  return () => poller.stop();
}
