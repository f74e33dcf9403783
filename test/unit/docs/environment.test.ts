import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENV, ENV_DESCRIPTIONS, STACK_TAG_KEY } from '../../../functions/shared/env-names.js';
import { renderEnvironmentDoc } from '../../../scripts/environment-doc.js';

const COMMITTED = readFileSync(new URL('../../../docs/environment.md', import.meta.url), 'utf8');

describe('docs/environment.md', () => {
  it('is committed exactly as generated from functions/shared/env-names.ts (npm run environment-doc)', () => {
    expect(COMMITTED).toBe(renderEnvironmentDoc());
  });

  it('lists every variable of ENV once, as a table row of its own', () => {
    const rows = [...COMMITTED.matchAll(/^\| `(TXS_[A-Z0-9_]+)` \|/gm)].map((match) => match[1]);
    expect(rows.sort()).toEqual(Object.values(ENV).sort());
  });

  it('names the stack tag key as the code spells it', () => {
    expect(ENV_DESCRIPTIONS.stackName.description).toContain(`\`${STACK_TAG_KEY}\``);
  });
});
