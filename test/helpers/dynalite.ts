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
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { vi } from 'vitest';
import { ItemClient } from '../../lib/store/index.js';
import { createTableInput } from '../../lib/store/table.js';

/** A running dynalite with the app record table. */
export interface Dynalite {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** The AWS SDK's DynamoDB client pointed at it, over HTTP (what the functions use). */
  client: DynamoDBClient;
  /** The store's item operations (plain items) over {@link Dynalite.client}, to read and write raw items. */
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
export async function createAppTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`dynalite table ${tableName} did not become ACTIVE`);
}

/** The SDK's DynamoDB client for a dynalite endpoint (dummy credentials). */
export function dynaliteClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
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
  const client = dynaliteClient(endpoint);
  const createTable = async (name?: string): Promise<string> => {
    tableCounter += 1;
    const tableName = name ?? `txs-apps-${process.pid}-${tableCounter}`;
    await createAppTable(client, tableName);
    return tableName;
  };
  const tableName = await createTable(options.tableName);
  return {
    endpoint,
    client,
    itemClient: new ItemClient(client),
    tableName,
    createTable,
    close: async () => {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/** A DynamoDB call as the SDK client was asked to send it. */
export interface SentCommand {
  /** The operation (`Query`, `GetItem`, …). */
  operation: string;
  /** The command's input, attribute values marshalled. */
  input: Record<string, unknown>;
}

/** The commands `client` sends while `run` runs, in order. */
export async function sentCommands(
  client: DynamoDBClient,
  run: () => Promise<unknown>,
): Promise<SentCommand[]> {
  const send = vi.spyOn(client, 'send');
  try {
    await run();
    return send.mock.calls.map(([command]) => ({
      operation: command.constructor.name.replace(/Command$/, ''),
      input: command.input as Record<string, unknown>,
    }));
  } finally {
    send.mockRestore();
  }
}

/** How many items `tableName` holds (a consistent Scan counting them). */
export async function itemCount(client: DynamoDBClient, tableName: string): Promise<number> {
  const { Count } = await client.send(
    new ScanCommand({ TableName: tableName, Select: 'COUNT', ConsistentRead: true }),
  );
  return Count ?? 0;
}
