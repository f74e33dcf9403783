/** The composer: a builtin component or a pasted AppDef, its arguments, run options, dry run, run. */
import type { ComponentsResponse, SchedulerInfo } from '../../lib/specs/api.js';
import { api, errorBox, type RunRequest } from '../api.js';
import { h, replace } from '../dom.js';
import { appHref, newKey } from '../route.js';
import { dryRunBlock } from './dryrun.js';

type Component = ComponentsResponse['components'][number];

/** Renders the composer; returns the clean-up. */
export function composerView(root: HTMLElement): () => void {
  let components: Component[] = [];
  let schedulers: SchedulerInfo[] = [];
  let key = newKey();
  const source = h(
    'select',
    { id: 'c-component', onchange: () => renderArgs() },
    h('option', { value: '' }, 'paste an AppDef (JSON)'),
  );
  const scheduler = h('select', { id: 'c-scheduler', onchange: () => renderOpts() });
  const session = h('input', { id: 'c-session', placeholder: 'torchx (default)' });
  const args = h('fieldset', { class: 'grid' });
  const opts = h('fieldset', { class: 'grid' });
  const appDef = h('textarea', {
    id: 'c-appdef',
    rows: 12,
    spellcheck: 'false',
    placeholder:
      '{"name": "echo", "roles": [{"name": "echo", "image": "/tmp", "entrypoint": "echo", "args": ["hi"]}]}',
  });
  const result = h('div', { 'aria-live': 'polite' });

  const current = () => components.find((c) => c.name === source.value);

  const renderArgs = () => {
    key = newKey();
    const c = current();
    appDef.closest('label')?.toggleAttribute('hidden', c !== undefined);
    if (!c) {
      replace(args);
      return;
    }
    replace(
      args,
      h('legend', {}, `Arguments of ${c.name}`),
      h('p', { class: 'muted small' }, c.description),
      ...c.args.map((a) =>
        h(
          'label',
          { title: a.help },
          `${a.name}${a.required ? ' *' : ''} `,
          h('input', {
            'data-arg': a.name,
            'data-flag': a.flags.find((f) => f.startsWith('--')) ?? a.flags[0] ?? `--${a.name}`,
            required: a.required,
            placeholder: a.default === undefined || a.default === null ? '' : String(a.default),
          }),
          h('span', { class: 'muted small' }, a.help),
        ),
      ),
      c.varargs &&
        h(
          'label',
          { title: c.varargs.help },
          `${c.varargs.name} (one per line) `,
          h('textarea', { 'data-varargs': '1', rows: 3 }),
          h('span', { class: 'muted small' }, c.varargs.help),
        ),
    );
  };

  const renderOpts = () => {
    key = newKey();
    const s = schedulers.find((x) => x.name === scheduler.value);
    replace(
      opts,
      h('legend', {}, `Run options of ${scheduler.value}`),
      ...(s?.runOpts ?? []).map((o) =>
        h(
          'label',
          { title: o.help },
          `${o.name}${o.required ? ' *' : ''} `,
          h('input', {
            'data-opt': o.name,
            placeholder: o.default === undefined || o.default === null ? o.type : String(o.default),
          }),
          h('span', { class: 'muted small' }, `${o.type}: ${o.help}`),
        ),
      ),
    );
  };

  const request = (): RunRequest => {
    const cfg: Record<string, string> = {};
    for (const input of opts.querySelectorAll<HTMLInputElement>('input[data-opt]'))
      if (input.value.trim() !== '') cfg[input.dataset.opt ?? ''] = input.value.trim();
    const body: RunRequest = { scheduler: scheduler.value, cfg };
    if (session.value.trim() !== '') body.session = session.value.trim();
    const c = current();
    if (c) {
      const list: string[] = [];
      for (const input of args.querySelectorAll<HTMLInputElement>('input[data-arg]'))
        if (input.value !== '') list.push(input.dataset.flag ?? '', input.value);
      const varargs = args.querySelector<HTMLTextAreaElement>('textarea[data-varargs]');
      if (varargs && varargs.value.trim() !== '')
        list.push('--', ...varargs.value.split('\n').filter((l) => l !== ''));
      body.component = c.name;
      body.args = list;
    } else {
      try {
        body.app = JSON.parse(appDef.value);
      } catch (error) {
        throw new Error(`The AppDef is not JSON: ${(error as Error).message}`);
      }
    }
    return body;
  };

  const dryRun = async () => {
    try {
      replace(result, h('h2', {}, 'Dry run'), dryRunBlock(await api.dryrun(request())));
    } catch (error) {
      replace(result, errorBox(error));
    }
  };
  const run = async () => {
    try {
      const answer = await api.run(request(), key);
      location.hash = appHref(answer.scheduler, answer.appId);
    } catch (error) {
      replace(result, errorBox(error));
    }
  };

  replace(
    root,
    h('h1', {}, 'New app'),
    h(
      'form',
      { class: 'composer', onsubmit: (e) => e.preventDefault(), onchange: () => (key = newKey()) },
      h(
        'div',
        { class: 'row' },
        h('label', { for: 'c-component' }, 'Component ', source),
        h('label', { for: 'c-scheduler' }, 'Scheduler ', scheduler),
        h('label', { for: 'c-session' }, 'Session ', session),
      ),
      h('label', { class: 'block' }, 'AppDef ', appDef),
      args,
      opts,
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'button', onclick: dryRun }, 'Dry run'),
        h('button', { type: 'button', class: 'primary', onclick: run }, 'Run'),
      ),
    ),
    result,
  );

  void Promise.all([api.components(), api.schedulers()]).then(
    ([c, s]) => {
      components = c.components;
      schedulers = s.schedulers;
      for (const x of components) source.append(h('option', { value: x.name }, x.name));
      replace(scheduler, ...schedulers.map((x) => h('option', { value: x.name }, x.name)));
      renderOpts();
    },
    (error) => replace(result, errorBox(error)),
  );
  return () => undefined;
}
