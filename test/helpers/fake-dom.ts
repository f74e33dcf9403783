/**
 * The little of the DOM the dashboard's views use (elements, text nodes, attributes, listeners, timers),
 * enough to run their rendering in node over generated API answers. Not a browser: layout, events and
 * CSS do not exist; `textOf` reads what a page would show.
 */

/** A node of the fake document. */
export class FakeNode {
  readonly childNodes: FakeNode[] = [];
  parentNode: FakeNode | null = null;
  readonly attributes = new Map<string, string>();
  private ownText = '';
  className = '';
  disabled = false;
  value = '';

  constructor(
    readonly nodeName: string,
    text = '',
  ) {
    this.ownText = text;
  }

  get firstChild(): FakeNode | null {
    return this.childNodes[0] ?? null;
  }

  get textContent(): string {
    return this.ownText + this.childNodes.map((c) => c.textContent).join('');
  }

  set textContent(text: string) {
    this.childNodes.length = 0;
    this.ownText = String(text);
  }

  appendChild(child: FakeNode): FakeNode {
    if (!(child instanceof FakeNode)) throw new TypeError('appendChild: not a node');
    child.parentNode = this;
    this.childNodes.push(child);
    return child;
  }

  append(...children: (FakeNode | string)[]): void {
    for (const c of children) this.appendChild(typeof c === 'string' ? new FakeNode('#text', c) : c);
  }

  removeChild(child: FakeNode): FakeNode {
    const i = this.childNodes.indexOf(child);
    if (i < 0) throw new Error('removeChild: not a child');
    this.childNodes.splice(i, 1);
    child.parentNode = null;
    return child;
  }

  setAttribute(name: string, value: string): void {
    if (typeof value !== 'string') throw new TypeError('setAttribute: value must be a string');
    this.attributes.set(name, value);
  }

  getAttribute(name: string): string | null {
    return this.attributes.get(name) ?? null;
  }

  addEventListener(): void {}
  removeEventListener(): void {}
}

/** Installs the fake `document`, `window` and `location` on globalThis; returns the uninstall. */
export function installFakeDom(): () => void {
  const saved = {
    document: (globalThis as Record<string, unknown>).document,
    window: (globalThis as Record<string, unknown>).window,
    location: (globalThis as Record<string, unknown>).location,
  };
  Object.assign(globalThis, {
    document: {
      hidden: false,
      createElement: (tag: string) => new FakeNode(tag.toUpperCase()),
      createTextNode: (text: string) => new FakeNode('#text', String(text)),
      createDocumentFragment: () => new FakeNode('#document-fragment'),
      addEventListener: () => undefined,
      removeEventListener: () => undefined,
    },
    window: { setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms) },
    location: { hash: '' },
  });
  return () => Object.assign(globalThis, saved);
}
