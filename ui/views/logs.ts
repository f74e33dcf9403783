/**
 * The logs viewer: one role and replica, opened at the end, following while the app runs; a regex that
 * highlights and jumps between matches without hiding context; since/until; download of the whole log.
 */
import type { LogPageResponse } from '../../lib/specs/api.js';
import { api, errorBox } from '../api.js';
import { h, replace } from '../dom.js';
import { Poller } from '../poll.js';
import { appHref, type Route, TERMINAL } from '../route.js';

/** Lines kept on the page; older ones are dropped from view (the download has them all). */
const MAX_LINES = 20000;

/** Renders the logs viewer; returns the clean-up. */
export function logsView(root: HTMLElement, route: Route): () => void {
  const scheduler = route.scheduler ?? '';
  const appId = route.appId ?? '';
  const query = route.query;
  const lines: string[] = [];
  let token: string | undefined;
  let done = false;
  let matches: HTMLElement[] = [];
  let at = -1;

  const setParam = (name: string, value: string) => {
    const q = new URLSearchParams(query);
    if (value === '') q.delete(name);
    else q.set(name, value);
    location.hash = appHref(scheduler, appId, 'logs', q);
  };
  const roleSelect = h('select', {
    id: 'l-role',
    onchange: (e) => setParam('role', (e.target as HTMLSelectElement).value),
  });
  const replicaSelect = h('select', {
    id: 'l-replica',
    onchange: (e) => setParam('replica', (e.target as HTMLSelectElement).value),
  });
  const streamSelect = h(
    'select',
    { id: 'l-streams', onchange: (e) => setParam('streams', (e.target as HTMLSelectElement).value) },
    ...['combined', 'stdout', 'stderr'].map((s) =>
      h('option', { value: s, selected: (query.get('streams') ?? 'combined') === s }, s),
    ),
  );
  const since = h('input', {
    id: 'l-since',
    value: query.get('since') ?? '',
    placeholder: 'ISO time or epoch ms',
    onchange: (e) => setParam('since', (e.target as HTMLInputElement).value.trim()),
  });
  const until = h('input', {
    id: 'l-until',
    value: query.get('until') ?? '',
    placeholder: 'ISO time or epoch ms',
    onchange: (e) => setParam('until', (e.target as HTMLInputElement).value.trim()),
  });
  const search = h('input', {
    id: 'l-search',
    type: 'search',
    placeholder: 'regex, e.g. (?i)error|loss=',
    autocomplete: 'off',
  });
  const counter = h('span', { class: 'muted', 'aria-live': 'polite' });
  const follow = h('input', { id: 'l-follow', type: 'checkbox', checked: true });
  const state = h('span', { class: 'muted' });
  const errors = h('div');
  const view = h('pre', { class: 'log', tabindex: 0, 'aria-label': 'log lines' });

  const baseQuery = () => {
    const q = new URLSearchParams();
    for (const name of ['role', 'replica', 'streams', 'since', 'until']) {
      const v = query.get(name);
      if (v) q.set(name, v);
    }
    return q;
  };

  const compile = (): RegExp | undefined => {
    const text = search.value;
    if (text === '') return undefined;
    // RE2's (?i) prefix, as the API takes it, becomes the i flag here.
    const insensitive = text.startsWith('(?i)');
    try {
      return new RegExp(insensitive ? text.slice(4) : text, insensitive ? 'gi' : 'g');
    } catch (error) {
      counter.textContent = `invalid regex: ${(error as Error).message}`;
      return undefined;
    }
  };

  const renderLines = () => {
    const re = compile();
    const fragment = document.createDocumentFragment();
    matches = [];
    for (const line of lines) {
      const row = h('span', { class: 'line' });
      if (re) {
        let pos = 0;
        re.lastIndex = 0;
        for (let m = re.exec(line); m !== null; m = re.exec(line)) {
          if (m[0] === '') {
            re.lastIndex++;
            continue;
          }
          row.append(line.slice(pos, m.index));
          const mark = h('mark', {}, m[0]);
          matches.push(mark);
          row.append(mark);
          pos = m.index + m[0].length;
        }
        row.append(line.slice(pos));
      } else row.append(line);
      row.append('\n');
      fragment.append(row);
    }
    replace(view, fragment);
    // New lines (while following) keep the match the user jumped to.
    if (at >= matches.length) at = -1;
    matches[at]?.classList.add('current');
    if (re)
      counter.textContent =
        at < 0
          ? `${matches.length} match${matches.length === 1 ? '' : 'es'}`
          : `${at + 1} of ${matches.length}`;
    else if (!counter.textContent?.startsWith('invalid')) counter.textContent = '';
  };

  const jump = (delta: number) => {
    if (matches.length === 0) return;
    matches[at]?.classList.remove('current');
    at = (at + delta + matches.length) % matches.length;
    const mark = matches[at];
    mark?.classList.add('current');
    mark?.scrollIntoView({ block: 'center' });
    counter.textContent = `${at + 1} of ${matches.length}`;
  };
  search.addEventListener('input', () => {
    counter.textContent = '';
    at = -1;
    renderLines();
  });
  search.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      jump(e.shiftKey ? -1 : 1);
    }
  });

  const download = async () => {
    const all: string[] = [];
    let next: string | undefined;
    try {
      do {
        const q = baseQuery();
        q.set('limit', '10000');
        if (next) q.set('nextToken', next);
        const page = await api.logs(scheduler, appId, q);
        all.push(...page.lines);
        next = page.caughtUp ? undefined : page.nextToken;
      } while (next);
    } catch (error) {
      replace(errors, errorBox(error));
      return;
    }
    const url = URL.createObjectURL(new Blob([all.map((l) => `${l}\n`).join('')], { type: 'text/plain' }));
    const a = h('a', {
      href: url,
      download: `${appId}-${query.get('role') ?? 'role'}-${query.get('replica') ?? '0'}.log`,
    });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  };

  replace(
    root,
    h('p', {}, h('a', { href: appHref(scheduler, appId) }, `← ${appId}`)),
    h(
      'form',
      { class: 'filters', onsubmit: (e) => e.preventDefault(), 'aria-label': 'log options' },
      h('label', { for: 'l-role' }, 'Role ', roleSelect),
      h('label', { for: 'l-replica' }, 'Replica ', replicaSelect),
      h('label', { for: 'l-streams' }, 'Streams ', streamSelect),
      h('label', { for: 'l-since' }, 'Since ', since),
      h('label', { for: 'l-until' }, 'Until ', until),
    ),
    h(
      'div',
      { class: 'row' },
      h('label', { for: 'l-search' }, 'Find ', search),
      h('button', { type: 'button', onclick: () => jump(-1), title: 'previous match (Shift+Enter)' }, '↑'),
      h('button', { type: 'button', onclick: () => jump(1), title: 'next match (Enter)' }, '↓'),
      counter,
      h('label', { for: 'l-follow' }, follow, ' follow'),
      h('button', { type: 'button', onclick: download }, 'Download'),
      state,
    ),
    errors,
    view,
  );

  // Role and replica choices come from the app's status.
  void api.app(scheduler, appId).then(
    (app) => {
      const role = query.get('role') ?? app.status.roles[0]?.role ?? app.app.roles[0]?.name ?? '';
      const roles =
        app.status.roles.length > 0 ? app.status.roles.map((r) => r.role) : app.app.roles.map((r) => r.name);
      replace(roleSelect, ...roles.map((r) => h('option', { value: r, selected: r === role }, r)));
      const replicas =
        app.status.roles.find((r) => r.role === role)?.replicas.map((r) => r.id) ??
        Array.from({ length: app.app.roles.find((r) => r.name === role)?.numReplicas ?? 1 }, (_, i) => i);
      const replica = query.get('replica') ?? '0';
      replace(
        replicaSelect,
        ...replicas.map((id) =>
          h('option', { value: String(id), selected: String(id) === replica }, String(id)),
        ),
      );
    },
    (error) => replace(errors, errorBox(error)),
  );

  const tick = async (): Promise<boolean> => {
    const before = lines.length;
    let page: LogPageResponse;
    try {
      do {
        const q = baseQuery();
        q.set('limit', '5000');
        if (token) q.set('nextToken', token);
        page = await api.logs(scheduler, appId, q);
        lines.push(...page.lines);
        if (page.nextToken) token = page.nextToken;
      } while (page.nextToken && !page.caughtUp);
      replace(errors);
    } catch (error) {
      replace(errors, errorBox(error));
      throw error;
    }
    if (lines.length > MAX_LINES) lines.splice(0, lines.length - MAX_LINES);
    // Complete when there is no token; a running app answers caughtUp with a token to poll again.
    if (!page.nextToken) {
      const app = await api.app(scheduler, appId).catch(() => undefined);
      done = app === undefined || TERMINAL.has(app.status.state);
    }
    state.textContent = done ? 'end of log' : 'following…';
    const changed = lines.length !== before;
    if (changed) {
      const atBottom = view.scrollTop + view.clientHeight >= view.scrollHeight - 40 || before === 0;
      renderLines();
      if (follow.checked && atBottom) view.scrollTop = view.scrollHeight;
    }
    if (done) poller.stop();
    return changed;
  };
  const poller = new Poller(tick, 1000, 15000);
  poller.start();
  return () => poller.stop();
}
