/**
 * `npm start`'s server (lib/local/main.ts) as a real child process, for tests that kill it with SIGKILL and
 * start it again on the same data directory, plus the small HTTP and waiting helpers such tests share.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../lib/local/main.ts', import.meta.url));

/** A server started by {@link startServerProcess}. */
export interface ServerProcess {
  url: string;
  process: ChildProcess;
  /** What it printed on stderr so far. */
  stderr(): string;
}

const started: ChildProcess[] = [];

/**
 * Starts the server on a free port with `dataDir` and `tokenFile`; resolves with its URL once it listens.
 *
 * @throws when it exits first (with its stderr).
 */
export async function startServerProcess(
  dataDir: string,
  tokenFile: string,
  env: Record<string, string> = {},
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, PORT: '0', TXS_DATA_DIR: dataDir, TXS_LOCAL_TOKEN_FILE: tokenFile, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
  });
  return { url, process: child, stderr: () => stderr };
}

/** SIGKILLs `server` and resolves once it is gone. */
export async function killServer(server: ServerProcess): Promise<void> {
  if (server.process.exitCode !== null || server.process.signalCode !== null) return;
  const exited = new Promise((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGKILL');
  await exited;
}

/** SIGKILLs every server still running (for `afterAll`). */
export function killAllServers(): void {
  for (const child of started)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** A request's status and JSON body. */
export async function json(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** `POST /v1/apps` with a JSON body. */
export function postApp(
  url: string,
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return json(`${url}/v1/apps`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The app's state from `GET /v1/apps/local_cwd/<appId>`. */
export async function localStateOf(url: string, appId: string): Promise<string> {
  const reply = await json(`${url}/v1/apps/local_cwd/${appId}`);
  return (reply.body.status as { state: string }).state;
}

/** Waits (bounded: 800 looks, 25 ms apart) until `check` holds. */
export async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 800; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`gave up waiting for ${what}`);
}
