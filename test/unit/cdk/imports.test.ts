import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CDK_DIR = new URL('../../../cdk/', import.meta.url).pathname;

/** Every `.ts` file under cdk/, relative to it, with the cdk/ files it imports (type-only imports too). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(CDK_DIR, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = readFileSync(path.join(CDK_DIR, file), 'utf8');
    const imports = [...source.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)]
      .map((match) => path.normalize(path.join(path.dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts'))))
      .filter((target) => !target.startsWith('..'));
    graph.set(file, imports);
  }
  return graph;
}

/** The import cycles of `graph`, each as the files around it. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const visit = (file: string, trail: string[]) => {
    const at = trail.indexOf(file);
    if (at >= 0) {
      cycles.push([...trail.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    for (const target of graph.get(file) ?? []) visit(target, [...trail, file]);
    done.add(file);
  };
  for (const file of graph.keys()) visit(file, []);
  return cycles;
}

describe('the CDK construct modules', () => {
  it('import each other without a cycle, type-only imports included', () => {
    const graph = importGraph();
    expect(graph.get('constructs/torchx-serverless.ts')).toBeDefined();
    expect(cyclesOf(graph)).toEqual([]);
  });

  it('finds a cycle when there is one (the check is live)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});
