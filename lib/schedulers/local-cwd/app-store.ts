/**
 * The on-disk state of local apps: `<dataDir>/<appId>/app.json` holds the request, the state, exit codes and
 * timestamps, so describe, list and logs keep working after the local server restarts.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AppDef, AppState, Cfg } from '../../specs/index.js';
import { isSafePathSegment } from '../app-ids.js';
import { SchedulerError } from '../errors.js';
import type { ProcessRef } from './processes.js';
import { type LocalCwdRequest, WORKSPACE_COPIES_DIR } from './translate.js';

export { isSafePathSegment };

/** File name of an app's record inside its directory. */
export const APP_RECORD_FILE = 'app.json';

/** Version of the record layout; bumped on incompatible changes. */
export const APP_RECORD_VERSION = 1;

/** What is recorded for one replica. */
export interface LocalReplicaRecord {
  role: string;
  replicaId: number;
  state: AppState;
  /** The replica's process (and process group) once spawned. */
  process?: ProcessRef;
  /** The process's exit code; for a signal, 128 + the signal number. */
  exitCode?: number;
  /** The signal that ended the process, if one did. */
  signal?: string;
  /** Why the replica ended as it did (spawn failure, termination, …). */
  reason?: string;
  /** JSON of the replica's torchelastic error file, when it wrote one. */
  structuredErrorMsg?: string;
  /** Epoch ms. */
  startedAt?: number;
  /** Epoch ms. */
  finishedAt?: number;
}

/** The local server instance that supervises an app while it runs. */
export interface SupervisorRef extends ProcessRef {
  /** Random id of the scheduler instance within its process. */
  instance: string;
}

/** Everything the local scheduler keeps about one app. */
export interface LocalAppRecord {
  version: typeof APP_RECORD_VERSION;
  appId: string;
  session: string;
  /** The app as submitted (describe reconstructs roles from it). */
  app: AppDef;
  cfg: Cfg;
  request: LocalCwdRequest;
  state: AppState;
  /** Why the app ended (or `undefined` while it runs). */
  reason?: string;
  /** JSON of the earliest torchelastic error file written by a replica, or `<NONE>`. */
  structuredErrorMsg: string;
  supervisor: SupervisorRef;
  replicas: LocalReplicaRecord[];
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms of the last change. */
  updatedAt: number;
  /** Epoch ms when every replica had started. */
  startedAt?: number;
  /** Epoch ms when the app reached its terminal state. */
  finishedAt?: number;
  /** Epoch ms of the first cancel request. */
  cancelRequestedAt?: number;
}

/** `<dataDir>/<appId>`. */
export function appDirOf(dataDir: string, appId: string): string {
  return path.join(dataDir, appId);
}

/** Writes the record atomically (temporary file, then rename), so readers never see a torn file. */
export async function writeAppRecord(dataDir: string, record: LocalAppRecord): Promise<void> {
  const file = path.join(appDirOf(dataDir, record.appId), APP_RECORD_FILE);
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, 'utf8');
  await rename(temporary, file);
}

/**
 * Reads an app's record; undefined when the app id is not a safe name or there is no record.
 *
 * @throws SchedulerError when the file exists but is not a record this version understands.
 */
export async function readAppRecord(dataDir: string, appId: string): Promise<LocalAppRecord | undefined> {
  if (!isSafePathSegment(appId)) return undefined;
  const file = path.join(appDirOf(dataDir, appId), APP_RECORD_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new SchedulerError(`${file} is not valid JSON; fix or remove the app's directory`, { cause: e });
  }
  const record = parsed as Partial<LocalAppRecord> | null;
  if (record?.version !== APP_RECORD_VERSION || record.appId !== appId || !Array.isArray(record.replicas)) {
    throw new SchedulerError(
      `${file} is not a local_cwd app record of version ${APP_RECORD_VERSION}; remove the app's directory`,
    );
  }
  return record as LocalAppRecord;
}

/** Ids of every directory under `dataDir` that may hold an app record (unsorted; not the workspace copies). */
export async function listAppIds(dataDir: string): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dataDir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return entries
    .filter((e) => e.isDirectory() && isSafePathSegment(e.name) && e.name !== WORKSPACE_COPIES_DIR)
    .map((e) => e.name);
}

/** Removes an app's directory (record and logs). */
export async function removeAppDir(dataDir: string, appId: string): Promise<void> {
  if (!isSafePathSegment(appId)) return;
  await rm(appDirOf(dataDir, appId), { recursive: true, force: true });
}
