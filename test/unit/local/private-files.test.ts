import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DataDirError,
  LOCK_FILE,
  lockDataDir,
  preparePrivateDir,
  removeTokenFile,
  writeTokenFile,
} from '../../../lib/local/private-files.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'txs-private-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('local server private files', () => {
  it('creates the data dir 0700, and tightens an existing one to 0700', () => {
    const fresh = join(root, 'a', 'b');
    preparePrivateDir(fresh);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    const open = join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    preparePrivateDir(open);
    expect(statSync(open).mode & 0o777).toBe(0o700);
  });

  // Only root can give a directory to another user, which is what this test needs.
  it.runIf(process.getuid?.() === 0)('refuses a data dir that belongs to another user', () => {
    const foreign = join(root, 'foreign');
    mkdirSync(foreign);
    chmodSync(foreign, 0o777);
    chownSync(foreign, 4242, 4242);
    expect(() => preparePrivateDir(foreign)).toThrow(DataDirError);
    expect(() => preparePrivateDir(foreign)).toThrow(/belongs to uid 4242/);
    expect(statSync(foreign).mode & 0o777).toBe(0o777);
  });

  it('refuses a second lock while the first is held, takes over a torn or dead one, and releases only its own', () => {
    const lock = lockDataDir(root);
    expect(() => lockDataDir(root)).toThrow(new RegExp(`another local server \\(pid ${process.pid}\\)`));
    lock.release();
    expect(existsSync(join(root, LOCK_FILE))).toBe(false);

    writeFileSync(join(root, LOCK_FILE), '{"pid": 12');
    const afterTorn = lockDataDir(root);
    expect(JSON.parse(readFileSync(join(root, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    // Someone replaced our lock (a later server after a crash): releasing ours leaves theirs.
    writeFileSync(join(root, LOCK_FILE), JSON.stringify({ pid: 1, id: 'theirs' }));
    afterTorn.release();
    expect(JSON.parse(readFileSync(join(root, LOCK_FILE), 'utf8')).id).toBe('theirs');
  });

  it('writes the token 0600 and removes the file only while it still holds that token', () => {
    const file = join(root, 'dir', 'server.token');
    writeTokenFile(file, 'first', true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, 'dir')).mode & 0o777).toBe(0o700);
    writeTokenFile(file, 'second', true);
    removeTokenFile(file, 'first');
    expect(readFileSync(file, 'utf8').trim()).toBe('second');
    removeTokenFile(file, 'second');
    expect(existsSync(file)).toBe(false);
  });
});
