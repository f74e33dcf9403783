/**
 * DynamoDB stream records built from real table items (dynalite has no streams): the old and new image of an
 * item as the stream (NEW_AND_OLD_IMAGES) would carry them, marshalled as the Lambda event does.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { StreamRecord } from '../../lib/events/outbox.js';
import { APP_SORT_KEY, appPartitionKey } from '../../lib/store/keys.js';
import type { Dynalite } from './dynalite.js';

/** The raw app item of `handle`, as stored. */
export async function appItem(db: Dynalite, handle: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.itemClient.get({
    TableName: db.tableName,
    Key: { pk: appPartitionKey(handle), sk: APP_SORT_KEY },
    ConsistentRead: true,
  });
  return Item;
}

/** The MODIFY stream record of an item that changed from `oldItem` to `newItem`. */
export function modifyRecord(
  oldItem: Record<string, unknown>,
  newItem: Record<string, unknown>,
  sequenceNumber: string,
): StreamRecord {
  const options = { removeUndefinedValues: true, convertClassInstanceToMap: true };
  return {
    eventName: 'MODIFY',
    dynamodb: {
      SequenceNumber: sequenceNumber,
      OldImage: marshall(oldItem, options),
      NewImage: marshall(newItem, options),
    },
  };
}
