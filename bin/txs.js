#!/usr/bin/env node
// The `txs` command (package.json "bin"). An installed package runs the prebuilt CLI (`dist/cli/main.js`,
// made by `npm run build`): plain JavaScript, no TypeScript at run time. A clone of the repository has the
// sources (`lib/cli/`) and runs them through tsx, so that `npx txs` always runs the working tree, built or
// not; TXS_PREBUILT=1 runs the prebuilt CLI in a clone too (bench/, and trying a build before publishing).
// tsImport keeps the tsx loader scoped to the CLI's own modules instead of registering it for the process.
import { existsSync } from 'node:fs';

const fromSources =
  process.env.TXS_PREBUILT !== '1' && existsSync(new URL('../lib/cli/main.ts', import.meta.url));
const { runProcess } = fromSources
  ? await (await import('tsx/esm/api')).tsImport('../lib/cli/main.ts', import.meta.url)
  : await import('../dist/cli/main.js');
await runProcess();
