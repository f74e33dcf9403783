/**
 * The size the docs quote for the X-Ray emitter (functions/shared/tracing.ts and xray-daemon.ts, "~N lines
 * together") must stay within a tenth of what the two files hold, so the figure cannot drift from the code.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EMITTER = ['functions/shared/tracing.ts', 'functions/shared/xray-daemon.ts'];
const PAGES = ['README.md', 'docs/deploy.md', 'docs/decisions/2026-11-23-x-ray-without-the-sdk.md'];

const lines = (path: string) => readFileSync(join(ROOT, path), 'utf8').trimEnd().split('\n').length;

/** The line counts a page quotes next to `xray-daemon.ts` (in the same paragraph). */
function quotedCounts(page: string): number[] {
  const paragraphs = readFileSync(join(ROOT, page), 'utf8').split(/\n\s*\n/);
  return paragraphs
    .filter((p) => p.includes('xray-daemon.ts'))
    .flatMap((p) =>
      [...p.matchAll(/(?:~|about )(\d[\d,]*) lines/g)].map((m) => Number(m[1]?.replace(',', ''))),
    );
}

describe('the X-Ray emitter size quoted in the docs', () => {
  const actual = EMITTER.reduce((sum, path) => sum + lines(path), 0);

  it.each(PAGES)('matches the two files within a tenth in %s', (page) => {
    const quoted = quotedCounts(page);
    expect(quoted.length).toBeGreaterThan(0);
    for (const count of quoted) expect(Math.abs(count - actual)).toBeLessThanOrEqual(actual / 10);
  });
});
