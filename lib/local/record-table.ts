/**
 * The app record table of the local server: created from `lib/store/table.ts` where it is missing (the
 * embedded dynalite's first start, or an external DynamoDB such as moto's), given the indexes added since when
 * a data directory from an older version lacks them, and waited for until it is ACTIVE.
 *
 * @module
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  waitUntilTableExists,
} from '@aws-sdk/client-dynamodb';
import { createTableInput } from '../store/index.js';
import type { InProcessDynamoDbHandler } from './embedded-dynamodb.js';

/**
 * Makes sure `tableName` exists at `endpoint` with every index, and is ACTIVE. `requestHandler` reaches the
 * embedded dynalite in process.
 */
export async function ensureRecordTable(
  tableName: string,
  endpoint: string,
  requestHandler?: InProcessDynamoDbHandler,
): Promise<void> {
  // The same region and credentials the container's store uses (functions/shared/container.ts): a DynamoDB
  // that keeps tables per region (moto, DynamoDB Local) must see the table where the store looks for it.
  const client = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    ...(requestHandler ? { requestHandler } : {}),
  });
  try {
    try {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      // A data dir from an older version may lack an index added since (e.g. byCreated): add it.
      const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
      const wanted = createTableInput(tableName);
      for (const index of wanted.GlobalSecondaryIndexes ?? []) {
        if (present.has(index.IndexName)) continue;
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            AttributeDefinitions: wanted.AttributeDefinitions,
            GlobalSecondaryIndexUpdates: [{ Create: index }],
          }),
        );
      }
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
      await client.send(new CreateTableCommand(createTableInput(tableName)));
    }
    // dynalite serves a new or changed table once it is ACTIVE again (a timer later).
    const waiting = { client, maxWaitTime: 30, minDelay: 0.01, maxDelay: 0.1 };
    await waitUntilTableExists(waiting, { TableName: tableName });
  } finally {
    client.destroy();
  }
}
