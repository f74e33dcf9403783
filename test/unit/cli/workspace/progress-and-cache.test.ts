/**
 * Progress reporting while packing (silent at first, then at a steady interval) and the cache's rule for
 * trusting a file's recorded hash.
 */
import { describe, expect, it } from 'vitest';
import { type FileHashRecord, RACY_WINDOW_NS, trustedHash } from '../../../../lib/cli/workspace/cache.js';
import {
  formatBytes,
  formatProgress,
  type PackProgress,
  throttleProgress,
} from '../../../../lib/cli/workspace/progress.js';

const REPORT: PackProgress = {
  phase: 'packing',
  files: 1234,
  bytes: 210 * 1024 * 1024,
  totalFiles: 5000,
  totalBytes: 500 * 1024 * 1024,
};

describe('progress', () => {
  it('stays silent during the first interval, then reports at most once per interval', () => {
    let time = 0;
    const seen: number[] = [];
    const report = throttleProgress(
      (progress) => seen.push(progress.files),
      500,
      () => time,
    );
    for (const at of [0, 100, 499, 500, 600, 999, 1000, 1700]) {
      time = at;
      report({ ...REPORT, files: at });
    }
    expect(seen).toEqual([500, 1000, 1700]);
  });

  it('formats a report as one line with thousands separators and binary units', () => {
    expect(formatProgress(REPORT)).toBe('packing workspace: 1,234 of 5,000 files, 210 MiB of 500 MiB');
    expect([formatBytes(512), formatBytes(3.4 * 1024 * 1024), formatBytes(2 ** 30)]).toEqual([
      '512 B',
      '3.4 MiB',
      '1.0 GiB',
    ]);
  });
});

describe('the cache: trusting a recorded hash', () => {
  const identity = { dev: '1', ino: '2', size: 3, mtimeNs: '10000000000', ctimeNs: '10000000000' };
  const record = (hashedAtNs: bigint): FileHashRecord => ({
    identity,
    sha256: 'a'.repeat(64),
    hashedAtNs: hashedAtNs.toString(),
  });

  it('trusts it when the identity is unchanged and the file was modified well before it was hashed', () => {
    expect(trustedHash(record(10_000_000_000n + RACY_WINDOW_NS + 1n), identity)).toBe('a'.repeat(64));
  });

  it('reads the file again when it was modified within the racy window before the hash', () => {
    expect(trustedHash(record(10_000_000_000n + RACY_WINDOW_NS), identity)).toBeUndefined();
  });

  it('reads the file again when its inode, size, mtime or ctime differ', () => {
    const settled = record(10n ** 12n);
    for (const change of [
      { ino: '3' },
      { size: 4 },
      { mtimeNs: '10000000001' },
      { ctimeNs: '20000000000' },
    ]) {
      expect(trustedHash(settled, { ...identity, ...change })).toBeUndefined();
    }
  });
});
