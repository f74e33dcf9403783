/**
 * Every relative link of the README and the pages under docs/ must reach a file that exists and, when it names
 * a `#fragment`, a heading of that page: moving a section (say, from performance.md into a decision record)
 * must not leave a link pointing at nothing.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** The Markdown pages whose links are checked: the README and every page under docs/. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(ROOT, 'docs', f));
  return [join(ROOT, 'README.md'), ...docs];
}

/**
 * The anchors of a page: GitHub's for each heading (lower case, punctuation dropped, spaces to hyphens, repeats
 * numbered) and each explicit `<a id="…"></a>`.
 */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const body = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const match of body.matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const slug = (match[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const match of body.matchAll(/<a id="([^"]+)"><\/a>/g)) anchors.add(match[1] as string);
  return anchors;
}

/** The relative links of a page (`[text](target)`), outside code blocks and code spans. */
function linksOf(markdown: string): string[] {
  const body = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...body.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] as string)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** Each link of each page that reaches no file or no heading, as `page: target`. */
function brokenLinks(): string[] {
  const broken: string[] = [];
  for (const page of pages()) {
    const text = readFileSync(page, 'utf8');
    for (const target of linksOf(text)) {
      const [path = '', fragment] = target.split('#');
      const file = path === '' ? page : join(dirname(page), decodeURIComponent(path));
      const where = `${relative(ROOT, page)}: ${target}`;
      if (!existsSync(file)) {
        broken.push(where);
        continue;
      }
      if (fragment === undefined || !file.endsWith('.md') || statSync(file).isDirectory()) continue;
      if (!anchorsOf(readFileSync(file, 'utf8')).has(fragment)) broken.push(where);
    }
  }
  return broken;
}

describe('the links between the README and the docs', () => {
  it('reach a file that exists and a heading of it', () => {
    expect(brokenLinks()).toEqual([]);
  });

  it('computes the anchors GitHub gives headings with punctuation, code and repeats, and explicit ones', () => {
    const anchors = anchorsOf(
      '# Dry runs at 10× TorchX (2026-11-24)\n## The cold-start goal: SDK floor + 20 ms\n## The `txs` command\n## Notes\n## Notes\n<a id="after-a-crash"></a>**After a crash.**\n',
    );
    expect([...anchors]).toEqual([
      'dry-runs-at-10-torchx-2026-11-24',
      'the-cold-start-goal-sdk-floor--20-ms',
      'the-txs-command',
      'notes',
      'notes-1',
      'after-a-crash',
    ]);
  });

  it('would catch a link to a heading that moved away', () => {
    const links = linksOf(
      'see [the old record](performance.md#issue-12-the-local-api-under-load) and `[x](y)`',
    );
    expect(links).toEqual(['performance.md#issue-12-the-local-api-under-load']);
    expect(anchorsOf('# Performance\n## Reference figures\n').has('issue-12-the-local-api-under-load')).toBe(
      false,
    );
  });
});
