import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LevelGuard } from '../../../lib/local/level-guard.js';
import { DiskFullError } from '../../../lib/specs/index.js';

const dir = mkdtempSync(join(tmpdir(), 'txs-level-guard-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stand-in for abstract-level's database whose writes fail with ENOSPC while `full` is set. */
function fakeLevel() {
  const calls: string[] = [];
  const state = { full: false };
  const db = {
    open: async (options?: { passive: boolean }) => {
      calls.push(options?.passive ? 'open(passive)' : 'open');
    },
    _put: async () => {
      calls.push('put');
      if (state.full)
        throw Object.assign(new Error('IO error: 000003.log: No space left on device'), {
          code: 'LEVEL_IO_ERROR',
        });
    },
  };
  const close = async () => {
    calls.push('close');
  };
  return { db, calls, state, close };
}

describe('LevelGuard', () => {
  it('answers a failed write instead of throwing it, refuses writes until it reopened the database, and lets reads through', async () => {
    const { db, calls, state, close } = fakeLevel();
    const guard = new LevelGuard(db, dir, close);
    await guard.admit(true);
    state.full = true;
    const failure = await db._put().catch((e: unknown) => e);
    guard.done();
    // dynalite sends an error with a statusCode and a body as its answer (it throws any other).
    expect(failure).toMatchObject({
      statusCode: 500,
      body: { message: expect.stringContaining('no space left') },
    });
    expect(guard.failureOf(500, JSON.stringify((failure as { body: unknown }).body))).toBeInstanceOf(
      DiskFullError,
    );
    // Reads go on without a reopen.
    await guard.admit(false);
    guard.done();
    expect(calls).not.toContain('close');
    // The next write reopens first (the temp directory's disk has room), then goes through.
    state.full = false;
    await guard.admit(true);
    guard.done();
    expect(calls.slice(-2)).toEqual(['close', 'open']);
    await guard.admit(true);
    guard.done();
    expect(calls.filter((c) => c === 'close')).toHaveLength(1);
  });

  it('refuses writes with DiskFullError while the database cannot be reopened', async () => {
    const { db, state, close } = fakeLevel();
    const guard = new LevelGuard(db, dir, close);
    state.full = true;
    await guard.admit(true);
    await db._put().catch(() => undefined);
    guard.done();
    db.open = async () => {
      throw Object.assign(new Error('IO error: MANIFEST: No space left on device'), {
        code: 'LEVEL_IO_ERROR',
      });
    };
    await expect(guard.admit(true)).rejects.toBeInstanceOf(DiskFullError);
    // Closed by the failed reopen: reads are refused too, rather than reaching a closed database.
    await expect(guard.admit(false)).rejects.toBeInstanceOf(DiskFullError);
  });
});
