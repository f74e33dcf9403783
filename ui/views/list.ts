/** The apps list: counts per state, filters kept in the URL, server-side pagination, live updates. */
import type { AppCountsResponse, AppSummary } from '../../lib/specs/api.js';
import { api, errorBox } from '../api.js';
import { badge, h, replace, time } from '../dom.js';
import { Poller } from '../poll.js';
import { appHref, type Route } from '../route.js';

const STATES = [
  'UNSUBMITTED',
  'SUBMITTED',
  'PENDING',
  'RUNNING',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'UNKNOWN',
];
const FILTERS = ['state', 'scheduler', 'session', 'since', 'owner'] as const;
/** The filters the counts share with the list (the counts span every state, so one can be picked). */
const COUNT_FILTERS = ['scheduler', 'session', 'since', 'owner'] as const;
/** Counts are asked again after a change of the list, at most this often (ms)… */
const COUNTS_AFTER_CHANGE_MS = 5_000;
/** …and at least this often (ms) while the page is shown. */
const COUNTS_AT_LEAST_MS = 60_000;

/** Renders the list into `root`; returns the clean-up. */
export function listView(root: HTMLElement, route: Route): () => void {
  const query = route.query;
  // Page tokens: the token of each page shown so far (the first page has none).
  const tokens: Array<string | undefined> = [undefined];
  let page = 0;
  let nextToken: string | undefined;
  let last = '';

  const setFilter = (name: string, value: string) => {
    const q = new URLSearchParams(query);
    if (value === '') q.delete(name);
    else q.set(name, value);
    location.hash = `#/${[...q].length > 0 ? `?${q}` : ''}`;
  };

  const filterSelect = (name: 'state' | 'scheduler', any: string, values: string[]) =>
    h(
      'select',
      { id: `f-${name}`, name, onchange: (e) => setFilter(name, (e.target as HTMLSelectElement).value) },
      h('option', { value: '' }, any),
      ...values.map((v) => h('option', { value: v, selected: query.get(name) === v }, v)),
    );
  const stateSelect = filterSelect('state', 'any state', STATES);
  const schedulerSelect = filterSelect('scheduler', 'any scheduler', []);
  const textFilter = (name: 'session' | 'since' | 'owner', placeholder: string) =>
    h('input', {
      id: `f-${name}`,
      name,
      placeholder,
      value: query.get(name) ?? '',
      onchange: (e) => setFilter(name, (e.target as HTMLInputElement).value.trim()),
    });
  void api.schedulers().then(
    ({ schedulers }) => {
      for (const s of schedulers)
        schedulerSelect.append(
          h('option', { value: s.name, selected: query.get('scheduler') === s.name }, s.name),
        );
    },
    () => undefined,
  );

  const counts = h('div', { class: 'counts', 'aria-label': 'apps per state' });
  const status = h('div', { class: 'status', 'aria-live': 'polite' });
  const body = h('tbody');
  const prev = h('button', { type: 'button', disabled: true, onclick: () => go(page - 1) }, '← Newer');
  const next = h('button', { type: 'button', disabled: true, onclick: () => go(page + 1) }, 'Older →');
  const pageLabel = h('span', { class: 'muted' });

  replace(
    root,
    h(
      'form',
      { class: 'filters', onsubmit: (e) => e.preventDefault(), 'aria-label': 'filters' },
      h('label', { for: 'f-state' }, 'State ', stateSelect),
      h('label', { for: 'f-scheduler' }, 'Scheduler ', schedulerSelect),
      h('label', { for: 'f-session' }, 'Session ', textFilter('session', 'torchx')),
      h('label', { for: 'f-since' }, 'Since ', textFilter('since', '2026-11-01 or epoch ms')),
      h(
        'label',
        { for: 'f-owner', title: 'deployment admins: all, or another owner' },
        'Owner ',
        textFilter('owner', 'me'),
      ),
      FILTERS.some((f) => query.has(f)) && h('a', { href: '#/', class: 'button' }, 'Clear filters'),
    ),
    counts,
    status,
    h(
      'table',
      { class: 'apps' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['App', 'State', 'Scheduler', 'Session', 'Created', 'Reason'].map((t) => h('th', {}, t)),
        ),
      ),
      body,
    ),
    h('nav', { class: 'pager row', 'aria-label': 'pages' }, prev, pageLabel, next),
  );

  const renderCounts = (result: AppCountsResponse) => {
    const selected = query.get('state')?.toUpperCase();
    // Past the server's cap every number is a lower bound: "10,000+".
    const shown = (n: number) => `${n.toLocaleString('en-US')}${result.complete ? '' : '+'}`;
    const countOf = (state: string) => result.counts[state as keyof AppCountsResponse['counts']];
    replace(
      counts,
      ...STATES.filter((s) => countOf(s) !== undefined).map((s) =>
        h(
          'button',
          {
            type: 'button',
            class: 'count',
            title: selected === s ? 'show every state' : `show only ${s}`,
            'aria-pressed': selected === s ? 'true' : 'false',
            onclick: () => setFilter('state', selected === s ? '' : s),
          },
          badge(s),
          ` ${shown(countOf(s) ?? 0)}`,
        ),
      ),
      h(
        'span',
        { class: 'muted', 'data-counted': result.counted, 'data-complete': String(result.complete) },
        ` ${shown(result.counted)} ${result.counted === 1 ? 'app' : 'apps'}`,
        COUNT_FILTERS.some((f) => query.has(f))
          ? ` ${result.counted === 1 ? 'matches' : 'match'} the filters`
          : ' in all',
        !result.complete && ': the server stopped counting at its cap, so each number is a lower bound',
      ),
    );
  };
  let countsAt = Number.NEGATIVE_INFINITY;
  let countsStale = true;
  const loadCounts = async () => {
    const now = Date.now();
    const due = countsStale ? now - countsAt >= COUNTS_AFTER_CHANGE_MS : now - countsAt >= COUNTS_AT_LEAST_MS;
    if (!due) return;
    countsAt = now;
    countsStale = false;
    const q = new URLSearchParams();
    for (const f of COUNT_FILTERS) {
      const v = query.get(f);
      if (v) q.set(f, v);
    }
    try {
      renderCounts(await api.counts(q));
    } catch (error) {
      // The list shows the same filters' error; an older API without the route says so here.
      replace(counts, h('span', { class: 'muted' }, `Counts: ${(error as Error).message}`));
    }
  };

  const render = (apps: AppSummary[]) => {
    replace(
      body,
      ...(apps.length === 0
        ? [h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No apps match. Start one with “New app”.'))]
        : apps.map((a) =>
            h(
              'tr',
              { 'data-handle': a.handle },
              h(
                'td',
                {},
                h('a', { href: appHref(a.scheduler, a.appId) }, a.name),
                h('div', { class: 'muted small' }, a.appId),
              ),
              h('td', {}, badge(a.state)),
              h('td', {}, a.scheduler),
              h('td', {}, a.session),
              h('td', {}, time(a.createdAt)),
              h('td', { class: 'reason' }, a.reason ?? ''),
            ),
          )),
    );
    prev.disabled = page === 0;
    next.disabled = nextToken === undefined;
    pageLabel.textContent = `page ${page + 1}`;
  };

  const load = async (): Promise<boolean> => {
    const q = new URLSearchParams();
    for (const f of FILTERS) {
      const v = query.get(f);
      if (v) q.set(f, v);
    }
    q.set('limit', query.get('limit') ?? '25');
    const token = tokens[page];
    if (token) q.set('nextToken', token);
    try {
      const result = await api.list(q);
      replace(status);
      nextToken = result.nextToken;
      const key = JSON.stringify(result);
      const changed = key !== last;
      last = key;
      if (changed) render(result.apps);
      countsStale ||= changed;
      await loadCounts();
      return changed;
    } catch (error) {
      replace(status, errorBox(error));
      throw error;
    }
  };
  const poller = new Poller(load);
  const go = (to: number) => {
    if (to > page) tokens[to] = nextToken;
    page = Math.max(0, to);
    last = '';
    poller.hurry();
  };
  poller.start();
  return () => poller.stop();
}
