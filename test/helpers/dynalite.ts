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
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { createTableInput } from '../../lib/store/table.js';

/** A running dynalite with the app record table. */
export interface Dynalite {
  /** `http://127.0.0.1:<port>`. */
  endpoint: string;
  /** A low-level client pointed at it. */
  client: DynamoDBClient;
  /** A document client pointed at it (undefined values removed, as the store's default client does). */
  documentClient: DynamoDBDocumentClient;
  /** The app record table created at start. */
  tableName: string;
  /** Creates another, empty app record table and returns its name (for tests that need isolation). */
  createTable(name?: string): Promise<string>;
  /** Stops the server and destroys the clients. */
  close(): Promise<void>;
}

let tableCounter = 0;

async function createAppTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await client.send(new CreateTableCommand(createTableInput(tableName)));
  for (let i = 0; i < 100; i++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`dynalite table ${tableName} did not become ACTIVE`);
}

/** A low-level and a document client for a dynalite endpoint (dummy credentials; undefined values removed). */
export function dynaliteClients(endpoint: string): {
  client: DynamoDBClient;
  documentClient: DynamoDBDocumentClient;
} {
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  const documentClient = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true },
  });
  return { client, documentClient };
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
  const { client, documentClient } = dynaliteClients(endpoint);
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
    documentClient,
    tableName,
    createTable,
    close: async () => {
      documentClient.destroy();
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
