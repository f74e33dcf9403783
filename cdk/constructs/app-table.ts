/**
 * The app record table: the layout of `lib/store/table.ts` (keys, indexes, TTL) as a DynamoDB table, on
 * demand, with point-in-time recovery and the stream the outbox reads.
 *
 * @module
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { APP_TABLE } from '../../lib/store/table.js';

/** Props of {@link AppTable}. */
export interface AppTableProps {
  /** RETAIN (the table also gets deletion protection) or DESTROY. */
  readonly removalPolicy: RemovalPolicy;
}

const attributeType = (type: 'S' | 'N') => (type === 'S' ? AttributeType.STRING : AttributeType.NUMBER);

/** The app record table of `lib/store/table.ts`, with a stream of new and old images (./outbox.ts). */
export class AppTable extends Table {
  constructor(scope: Construct, id: string, props: AppTableProps) {
    super(scope, id, {
      partitionKey: { name: APP_TABLE.partitionKey.name, type: AttributeType.STRING },
      sortKey: { name: APP_TABLE.sortKey.name, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: APP_TABLE.timeToLiveAttribute,
      removalPolicy: props.removalPolicy,
      deletionProtection: props.removalPolicy !== RemovalPolicy.DESTROY,
      // The outbox: committed record changes feed the publisher function (see ./outbox.ts).
      stream: StreamViewType.NEW_AND_OLD_IMAGES,
    });
    for (const index of APP_TABLE.indexes) {
      this.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey.name, type: attributeType(index.partitionKey.type) },
        sortKey: { name: index.sortKey.name, type: attributeType(index.sortKey.type) },
        projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
      });
    }
  }
}
