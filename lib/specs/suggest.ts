/**
 * "Did you mean …?" for names a user mistyped (run options, components, schedulers).
 *
 * @module
 */

/** Edit distance with adjacent transpositions counting as one edit (`prioirty` → `priority` is 1). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    const row = d[i] as number[];
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, at(i - 2, j - 2) + 1);
      }
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/**
 * The candidates closest to `name` (case-insensitive): among those within about a third of the name's
 * length in edits (or that start with it), the ones at the smallest distance.
 *
 * @example
 * ```ts
 * suggestNames('prioirty', ['priority', 'queue']); // ['priority']
 * suggestNames('utils.ech', ['utils.echo', 'utils.sh']); // ['utils.echo']
 * ```
 */
export function suggestNames(name: string, candidates: Iterable<string>, max = 3): string[] {
  const lowered = name.toLowerCase();
  const limit = Math.max(1, Math.floor(lowered.length / 3));
  const scored: { candidate: string; distance: number }[] = [];
  for (const candidate of new Set(candidates)) {
    const other = candidate.toLowerCase();
    const distance = other.startsWith(lowered) && lowered.length >= 3 ? 0.5 : editDistance(lowered, other);
    if (distance <= limit) scored.push({ candidate, distance });
  }
  const best = Math.min(...scored.map((s) => s.distance));
  return scored
    .filter((s) => s.distance === best)
    .sort((x, y) => x.candidate.localeCompare(y.candidate))
    .slice(0, max)
    .map((s) => s.candidate);
}
