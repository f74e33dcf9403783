/**
 * Starting and stopping a moto server (`python3 -m moto.server`) on a free loopback port, and IAM's Query API
 * on it (the project has no IAM SDK client). The global setup starts the suite's moto; a test file may start
 * its own with other settings (e.g. `INITIAL_NO_AUTH_ACTION_COUNT`, which turns on moto's request signature and
 * IAM checks).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createSigV4Signer } from '../../lib/cli/sigv4.js';
import { MOTO_CREDENTIALS, MOTO_REGION } from './constants.js';

/** How long moto may take to start (it imports every service's models). */
const START_TIMEOUT_MS = 60_000;
const INSTALL_HINT =
  "moto's server must be importable by the python3 on PATH (or TXS_MOTO_PYTHON): pip install 'moto[server]'";

/**
 * Starts `python -m moto.server` on port 0 (with `env` added to this process's environment) and resolves with
 * its URL once it listens.
 */
export function startMoto(env: NodeJS.ProcessEnv = {}): Promise<{ url: string; child: ChildProcess }> {
  const python = process.env.TXS_MOTO_PYTHON ?? 'python3';
  const child = spawn(python, ['-m', 'moto.server', '-H', '127.0.0.1', '-p', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env, PYTHONUNBUFFERED: '1' },
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const fail = (message: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${message}\n${INSTALL_HINT}\n--- moto output ---\n${output.slice(-4000)}`));
    };
    const timer = setTimeout(
      () => fail(`moto did not start listening within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], child });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', (error) => fail(`could not run ${python}: ${error.message}`));
    child.once('exit', (code, signal) => fail(`${python} -m moto.server exited (${signal ?? code})`));
    // Never leave moto behind, even when the run ends without its teardown.
    process.once('exit', () => child.kill('SIGKILL'));
  });
}

/** Stops a moto started by {@link startMoto}. */
export async function stopMoto(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.removeAllListeners('exit');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/**
 * One IAM Query API call, SigV4-signed with `credentials` (moto routes it by the signature's service name).
 *
 * @returns the response's XML.
 * @throws Error with moto's answer when it is not a success.
 */
export async function iamQuery(
  endpoint: string,
  action: string,
  params: Record<string, string>,
  credentials: { accessKeyId: string; secretAccessKey: string } = MOTO_CREDENTIALS,
): Promise<string> {
  const signer = createSigV4Signer({ region: MOTO_REGION, service: 'iam', credentials });
  const url = new URL(`${endpoint}/`);
  const body = new URLSearchParams({ Action: action, Version: '2010-05-08', ...params }).toString();
  const headers = await signer.sign({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body,
  });
  const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  if (!response.ok) throw new Error(`IAM ${action} on moto failed (${response.status}): ${text}`);
  return text;
}
