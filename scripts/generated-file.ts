/**
 * What the scripts that generate a committed file share (`npm run openapi`, `npm run environment-doc`): write
 * it, or with `--check` exit 1 when the committed file differs from what would be written.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** Writes `text` to `file` (a URL inside the repository, shown as `name`), or checks it with `--check`. */
export function writeOrCheck(file: URL, name: string, text: string, script: string): void {
  if (!process.argv.includes('--check')) {
    writeFileSync(file, text);
    console.log(`wrote ${name} (${text.length} bytes)`);
    return;
  }
  let committed = '';
  try {
    committed = readFileSync(file, 'utf8');
  } catch {}
  if (committed !== text) {
    console.error(`${name} is stale: run \`${script}\` and commit it`);
    process.exit(1);
  }
}
