/** Tiny DOM helpers: elements are built with `h`, never from HTML strings (no injection through API data). */

type Child = Node | string | number | false | null | undefined;
type Attrs = Record<string, string | number | boolean | ((event: Event) => void) | undefined>;

/** Creates an element with attributes (`on…` keys are listeners) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, ...children);
  return el;
}

/** Appends children, skipping empty ones. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces all children. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, ...children);
}

/** A state badge. */
export function badge(state: string): HTMLSpanElement {
  return h('span', { class: `badge s-${state.toLowerCase()}` }, state);
}

/** A readable local time with the ISO time as its title. */
export function time(value: string | number | undefined): HTMLTimeElement | string {
  if (value === undefined || value === '') return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return h('time', { datetime: date.toISOString(), title: date.toISOString() }, date.toLocaleString());
}

/** Copies text to the clipboard, falling back to selecting it. */
export async function copyText(text: string, fallback: HTMLElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(fallback);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
    return false;
  }
}

/** Asks for confirmation in a modal dialog; resolves true when the user confirms. */
export function confirmDialog(title: string, body: Child, confirmLabel: string): Promise<boolean> {
  return new Promise((resolve) => {
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': 'dlg-title' },
      h('h2', { id: 'dlg-title' }, title),
      h('div', {}, body),
      h(
        'form',
        { method: 'dialog', class: 'row' },
        h('button', { value: 'cancel', type: 'submit' }, 'Keep it'),
        h('button', { value: 'ok', type: 'submit', class: 'danger' }, confirmLabel),
      ),
    );
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      dialog.remove();
    });
    document.body.appendChild(dialog);
    dialog.showModal();
  });
}
