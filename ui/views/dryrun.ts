/** The dry run of a request, readable (the scheduler's text) and copyable (the exact native request). */
import type { DryRunResponse } from '../../lib/specs/api.js';
import { copyText, h } from '../dom.js';

/** Renders a dry-run answer: warnings, the text rendering, the native request as JSON with a copy button. */
export function dryRunBlock(result: DryRunResponse): HTMLElement {
  const json = JSON.stringify(result.request, null, 2);
  const pre = h('pre', { class: 'code', tabindex: 0, 'aria-label': 'native request (JSON)' }, json);
  const copied = h('span', { class: 'muted', 'aria-live': 'polite' });
  return h(
    'div',
    { class: 'dryrun' },
    ...(result.warnings ?? []).map((w) => h('div', { class: 'warning' }, `warning: ${w}`)),
    result.text && h('pre', { class: 'code text', tabindex: 0, 'aria-label': 'request (text)' }, result.text),
    h(
      'div',
      { class: 'row' },
      h('strong', {}, `Native request (${result.scheduler})`),
      h(
        'button',
        {
          type: 'button',
          class: 'copy',
          onclick: async () => {
            copied.textContent = (await copyText(json, pre)) ? 'copied' : 'selected: press Ctrl+C';
          },
        },
        'Copy JSON',
      ),
      copied,
    ),
    pre,
  );
}
