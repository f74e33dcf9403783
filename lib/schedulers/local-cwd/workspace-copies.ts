/**
 * The runs' copies of their workspaces, `<dataDir>/.workspaces/<appId>`: unpacked as the app starts (into
 * a temporary name, renamed into place when whole, so no half copy ever has the final name), removed when
 * the app is deleted or some time after it ended (renamed away first, so a crash mid-removal leaves a
 * leftover the next sweep finds, never a damaged copy under the app's name).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { type LocalCwdWorkspace, WORKSPACE_COPIES_DIR, workspaceCopyOf } from './translate.js';
import { extractWorkspace } from './workspace-unpack.js';

/**
 * Subdirectories of the copies directory for copies on their way in and out. Neither can be an app id, which
 * always ends in `-<id>`.
 */
const UNPACKING = '.unpacking';
const REMOVING = '.removing';

/**
 * Unpacks the run's copy of its workspace into `workspace.dir`. A leftover of an earlier attempt under the
 * temporary name is replaced.
 *
 * @throws UnsafeArchiveError, or the file system's error (the archive is gone, the disk is full); nothing is
 *   then left under `workspace.dir` or the temporary name.
 */
export async function unpackWorkspaceCopy(workspace: LocalCwdWorkspace): Promise<void> {
  const root = path.dirname(workspace.dir);
  const temp = path.join(root, UNPACKING, path.basename(workspace.dir));
  await mkdir(path.dirname(temp), { recursive: true, mode: 0o700 });
  await rm(temp, { recursive: true, force: true });
  try {
    await extractWorkspace(workspace.archive, temp);
    await rename(temp, workspace.dir);
  } catch (error) {
    await rm(temp, { recursive: true, force: true });
    throw error;
  }
}

/** Removes the app's copy of its workspace, if it has one. */
export async function removeWorkspaceCopy(dataDir: string, appId: string): Promise<void> {
  await discard(workspaceCopyOf(dataDir, appId), path.join(dataDir, WORKSPACE_COPIES_DIR));
}

/** Removals in progress in this process (paths under a `.removing` directory). */
const removals = new Set<string>();

/** Moves `entry` (of the copies directory, or one level under it) out of the way, then removes it. */
async function discard(entry: string, root: string): Promise<void> {
  if ((await stat(entry).catch(() => undefined)) === undefined) return;
  const trash = path.join(root, REMOVING);
  const away = path.join(trash, randomBytes(8).toString('hex'));
  removals.add(away);
  try {
    await mkdir(trash, { recursive: true, mode: 0o700 });
    await rename(entry, away);
    await rm(away, { recursive: true, force: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  } finally {
    removals.delete(away);
  }
}

/** The copies directory's entries. */
interface Entries {
  /** The apps whose copies are there: app ids. */
  copies: string[];
  /** Copies being unpacked, or what a crash left of one: app ids. */
  unpacking: string[];
}

async function entriesOf(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** The copies and the copies being unpacked (none when there is no copies directory). */
export async function listWorkspaceCopies(dataDir: string): Promise<Entries> {
  const root = path.join(dataDir, WORKSPACE_COPIES_DIR);
  const copies = (await entriesOf(root)).filter((name) => name !== UNPACKING && name !== REMOVING);
  return { copies, unpacking: await entriesOf(path.join(root, UNPACKING)) };
}

/** Removes what a crash left of the unpacking of `appId`'s copy. */
export async function removeUnpackingLeftover(dataDir: string, appId: string): Promise<void> {
  const root = path.join(dataDir, WORKSPACE_COPIES_DIR);
  await discard(path.join(root, UNPACKING, appId), root);
}

/** Removes what removals interrupted by a crash left (never a removal this process has in progress). */
export async function removeRemovalLeftovers(dataDir: string): Promise<void> {
  const trash = path.join(dataDir, WORKSPACE_COPIES_DIR, REMOVING);
  for (const name of await entriesOf(trash)) {
    const entry = path.join(trash, name);
    if (!removals.has(entry)) await rm(entry, { recursive: true, force: true });
  }
}
