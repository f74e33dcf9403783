/**
 * Every `txs <command>` that a message (lib/, functions/, ui/, the TorchX plugin) or a documentation page
 * names must exist in the CLI's command table: a message telling users to run a command that does not exist
 * (`txs dryrun`) is a bug.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../../lib/cli/program.js';
import { memoryIO } from '../cli/helpers.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** Where messages and pages live, and which files of each count. */
const SOURCES: Array<{ dir: string; ext: RegExp; skip?: RegExp }> = [
  { dir: 'lib', ext: /\.ts$/ },
  { dir: 'functions', ext: /\.ts$/ },
  { dir: 'ui', ext: /\.ts$/ },
  { dir: 'python', ext: /\.py$/, skip: /(^|\/)tests\// },
  { dir: 'docs', ext: /\.md$/ },
  { dir: '.', ext: /^README\.md$/ },
];

/**
 * English words that follow "txs" in prose ("txs sends the token", "txs options go before it"): not commands.
 * A command mentioned by mistake (`txs dryrun`) is not one of them.
 */
const PROSE = new Set([
  'sends',
  'reads',
  'reaches',
  'follows',
  'and',
  'as',
  'options',
  'version',
  'start-up',
]);

function filesUnder(dir: string, ext: RegExp, skip?: RegExp): string[] {
  const path = join(ROOT, dir);
  if (dir === '.')
    return readdirSync(path)
      .filter((f) => ext.test(f))
      .map((f) => join(path, f));
  return readdirSync(path, { recursive: true, encoding: 'utf8' })
    .filter((f) => ext.test(f) && !skip?.test(f) && !f.includes('node_modules'))
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile());
}

/** The commands of the real program, from its `--help` (commander's own command table). */
async function realCommands(): Promise<Set<string>> {
  const io = memoryIO();
  await main(['--help'], io);
  const help = io.out();
  const section = help.slice(help.indexOf('Commands:'));
  const names = [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1] as string);
  return new Set(names.filter((n) => n !== 'help'));
}

/** Every `txs <word>` in the sources, with where it is. */
function mentions(): Array<{ word: string; where: string }> {
  const found: Array<{ word: string; where: string }> = [];
  for (const { dir, ext, skip } of SOURCES) {
    for (const file of filesUnder(dir, ext, skip)) {
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, index) => {
        for (const match of line.matchAll(/(?:^|[^\w./-])txs ([a-z][\w-]*)/g)) {
          found.push({ word: match[1] as string, where: `${relative(ROOT, file)}:${index + 1}` });
        }
      });
    }
  }
  return found;
}

describe('the txs commands named in messages and docs', () => {
  it('reads the command table from the program', async () => {
    const commands = await realCommands();
    expect([...commands]).toEqual(
      expect.arrayContaining(['run', 'status', 'describe', 'log', 'list', 'wait']),
    );
    expect(commands.has('dryrun')).toBe(false);
  });

  it('names only commands that exist', async () => {
    const commands = await realCommands();
    const all = mentions();
    expect(all.length).toBeGreaterThan(100);
    const unknown = all.filter((m) => !commands.has(m.word) && !PROSE.has(m.word));
    expect(unknown).toEqual([]);
  });

  it('would catch a message that names `txs dryrun`', async () => {
    const commands = await realCommands();
    const [match] = [...'run `txs dryrun -s lsf ...`'.matchAll(/(?:^|[^\w./-])txs ([a-z][\w-]*)/g)];
    expect(match?.[1]).toBe('dryrun');
    expect(commands.has(match?.[1] ?? '')).toBe(false);
  });
});

describe('docs/deploy.md', () => {
  it('counts the Lambda functions the stack deploys: one per route and per event source', async () => {
    const { ROUTES, EVENT_FUNCTIONS } = await import('../../../functions/routes.js');
    const count = ROUTES.length + Object.keys(EVENT_FUNCTIONS).length;
    const page = readFileSync(join(ROOT, 'docs', 'deploy.md'), 'utf8');
    expect(page).toContain(`| ${count} Lambda functions |`);
  });
});

describe('LICENSE', () => {
  it('is BSD-3-Clause for the contributors, keeps TorchX’s notices, and the Python package ships the same file', () => {
    const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^BSD 3-Clause License\n\nCopyright \(c\) \d{4}, torchx-serverless contributors/);
    expect(license).toContain('Copyright (c) Meta Platforms, Inc. and affiliates.');
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string };
    expect(pkg.license).toBe('BSD-3-Clause');
    expect(readFileSync(join(ROOT, 'python', 'LICENSE'), 'utf8')).toBe(license);
  });
});
