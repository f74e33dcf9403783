/** dynalite in a child process, so the functions under test and the database do not share one thread. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ItemClient } from '../../lib/store/index.js';
import { createAppTable, type Dynalite, dynaliteClient } from '../../test/helpers/dynalite.js';
import { ROOT } from '../bundling.js';

/** Starts dynalite in a child process with the app record table. */
export async function startDynaliteProcess(): Promise<Dynalite> {
  const child = spawn(process.execPath, [join(ROOT, 'bench/dynalite-process.mjs')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (chunk: Buffer) =>
      resolve((JSON.parse(chunk.toString()) as { port: number }).port),
    );
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = dynaliteClient(endpoint);
  let counter = 0;
  const createTable = async (name?: string) => {
    counter += 1;
    const tableName = name ?? `txs-bench-${counter}`;
    await createAppTable(client, tableName);
    return tableName;
  };
  const tableName = await createTable();
  return {
    endpoint,
    client,
    itemClient: new ItemClient(client),
    tableName,
    createTable,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    },
  };
}
