#!/usr/bin/env node
// The `txs` command (package.json "bin"). An installed package runs the prebuilt CLI (`dist/cli/main.js`,
// made by `npm run build`): plain JavaScript, no TypeScript at run time. A clone of the repository has the
// sources (`lib/cli/`): it runs the prebuilt CLI too while that is current — `npm run build:cli` (or
// `npm run build`) wrote it and none of the files it was built from (listed in `dist/cli/sources.json`) has
// changed since — and otherwise the sources through tsx, so that `npx txs` always runs the working tree.
// TXS_PREBUILT=1 runs the prebuilt CLI regardless, TXS_PREBUILT=0 the sources.
// tsImport keeps the tsx loader scoped to the CLI's own modules instead of registering it for the process.
import { existsSync, readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);

/** Whether dist/cli/main.js exists and is at least as new as every source it was built from. */
function builtIsCurrent() {
  try {
    const built = statSync(new URL('dist/cli/main.js', root)).mtimeMs;
    const sources = JSON.parse(readFileSync(new URL('dist/cli/sources.json', root), 'utf8'));
    return sources.every((source) => statSync(new URL(source, root)).mtimeMs <= built);
  } catch {
    return false; // no build, no list, or a source gone: the sources decide
  }
}

const choice = process.env.TXS_PREBUILT;
const fromSources =
  choice !== '1' && existsSync(new URL('lib/cli/main.ts', root)) && (choice === '0' || !builtIsCurrent());
const { runProcess } = fromSources
  ? await (await import('tsx/esm/api')).tsImport('../lib/cli/main.ts', import.meta.url)
  : await import('../dist/cli/main.js');
await runProcess();
