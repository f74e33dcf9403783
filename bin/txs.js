#!/usr/bin/env node
// The `txs` command (package.json "bin"). The CLI is TypeScript in lib/cli; tsx compiles it on the fly, so
// `npx txs` works from a clone after `npm install` with no build step. tsImport keeps the loader scoped to
// the CLI's own modules instead of registering it for the whole process.
import { tsImport } from 'tsx/esm/api';

const { runProcess } = await tsImport('../lib/cli/main.ts', import.meta.url);
await runProcess();
