/**
 * An in-process DynamoDB API (dynalite, in memory) with the app record table created, for tests that need
 * real DynamoDB semantics (conditional writes, GSI queries). Start one per test file:
 *
 * ```ts
 * let db: Dynalite;
 * beforeAll(async () => { db = await startDynalite(); });
 * afterAll(() => db.close());
 * ```
 */
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import { ItemClient } from '../../lib/store/index.js';
import { createTableInput } from '../../lib/store/table.js';

/** A running dynalite with the app record table. */
export interface Dynalite {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** The store's DynamoDB client pointed at it, over HTTP (what the functions use). */
  itemClient: ItemClient;
  /** The app record table created at start. */
  tableName: string;
  /** Creates another, empty app record table and returns its name (for tests that need isolation). */
  createTable(name?: string): Promise<string>;
  /** Stops the server. */
  close(): Promise<void>;
}

let tableCounter = 0;

/** Creates the app record table `tableName` through `client` and waits until it is ACTIVE. */
export async function createAppTable(client: ItemClient, tableName: string): Promise<void> {
  await client.call('CreateTable', createTableInput(tableName));
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.call<{ Table?: { TableStatus?: string } }>('DescribeTable', {
      TableName: tableName,
    });
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`dynalite table ${tableName} did not become ACTIVE`);
}

/** The store's DynamoDB client for a dynalite endpoint (dummy credentials). */
export function dynaliteClient(endpoint: string): ItemClient {
  return new ItemClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

/** Starts dynalite on 127.0.0.1 (a free port, in memory) and creates the app record table. */
export async function startDynalite(options: { tableName?: string } = {}): Promise<Dynalite> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const itemClient = dynaliteClient(endpoint);
  const createTable = async (name?: string): Promise<string> => {
    tableCounter += 1;
    const tableName = name ?? `txs-apps-${process.pid}-${tableCounter}`;
    await createAppTable(itemClient, tableName);
    return tableName;
  };
  const tableName = await createTable(options.tableName);
  return {
    endpoint,
    itemClient,
    tableName,
    createTable,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
