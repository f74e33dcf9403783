/**
 * The SDK floor of a function's cold start (the goal of docs/performance.md): a minimal bundle holding just the
 * AWS SDK clients the function calls, which builds them on its first invocation and sends the same requests
 * the function's first invocation sent (as the loopback stub counted them), built with the stack's bundling
 * definition. What a function costs over its floor is what its own code costs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as batch from '@aws-sdk/client-batch';

/** An SDK client package, its client class, and the input each of its operations is sent with. */
interface SdkService {
  package: string;
  client: string;
  /** The operation's name as the stub counts it → the command's name (`GetItem` for `GetItemCommand`). */
  operation(action: string): string;
  input(operation: string): Record<string, unknown>;
}

/** Batch's commands, to name a REST-JSON action as the stub counts it (the path's last segment, lower case). */
const BATCH_OPERATIONS = Object.keys(batch)
  .filter((name) => name.endsWith('Command'))
  .map((name) => name.slice(0, -'Command'.length));

const KEY = { pk: { S: 'APP#floor' }, sk: { S: 'A' } };

/** The services the functions call, by the prefix of the stub's call names. */
const SERVICES: Record<string, SdkService> = {
  DynamoDB_20120810: {
    package: '@aws-sdk/client-dynamodb',
    client: 'DynamoDBClient',
    operation: (action) => action,
    input: (operation) =>
      operation === 'PutItem'
        ? { TableName: 'txs-apps', Item: KEY }
        : operation === 'Query'
          ? {
              TableName: 'txs-apps',
              KeyConditionExpression: 'pk = :pk',
              ExpressionAttributeValues: { ':pk': KEY.pk },
            }
          : { TableName: 'txs-apps', Key: KEY },
  },
  Batch: {
    package: '@aws-sdk/client-batch',
    client: 'BatchClient',
    operation: (action) => {
      const name = BATCH_OPERATIONS.find((o) => o.toLowerCase() === action);
      if (name === undefined) throw new Error(`sdk floor: unknown Batch action ${action}`);
      return name;
    },
    input: () => ({}),
  },
  SageMaker: {
    package: '@aws-sdk/client-sagemaker',
    client: 'SageMakerClient',
    operation: (action) => action,
    input: () => ({}),
  },
  Logs_20140328: {
    package: '@aws-sdk/client-cloudwatch-logs',
    client: 'CloudWatchLogsClient',
    operation: (action) => action,
    input: () => ({}),
  },
  S3: {
    package: '@aws-sdk/client-s3',
    client: 'S3Client',
    operation: (action) => action,
    input: () => ({ Bucket: 'txs-bench-workspaces', Key: 'floor' }),
  },
  AWSEvents: {
    package: '@aws-sdk/client-eventbridge',
    client: 'EventBridgeClient',
    operation: (action) => action,
    input: () => ({ Entries: [{ Source: 'floor', DetailType: 'floor', Detail: '{}' }] }),
  },
};

/**
 * The source of a floor handler that sends `calls` (`<service>.<action>` → count, as the stub counted a
 * function's first invocation): the clients are built on the first invocation, as the functions build theirs.
 */
export function floorSource(calls: Record<string, number>): string {
  const imports = new Map<string, Set<string>>();
  const sends: string[] = [];
  for (const [call, count] of Object.entries(calls).sort()) {
    const [prefix = '', action = ''] = call.split('.');
    const service = SERVICES[prefix];
    if (service === undefined) throw new Error(`sdk floor: no SDK client for ${call}`);
    const command = `${service.operation(action)}Command`;
    const names = imports.get(service.package) ?? new Set([service.client]);
    names.add(command);
    imports.set(service.package, names);
    const input = JSON.stringify(service.input(service.operation(action)));
    for (let i = 0; i < count; i++)
      sends.push(`  await client('${service.client}').send(new ${command}(${input}));`);
  }
  const clientClasses = [...imports.values()].map((names) => [...names][0]);
  return [
    ...[...imports.entries()].map(([pkg, names]) => `import { ${[...names].join(', ')} } from '${pkg}';`),
    `const classes = { ${clientClasses.join(', ')} };`,
    'const clients = new Map();',
    'const client = (name) => {',
    '  if (!clients.has(name)) clients.set(name, new classes[name]({}));',
    '  return clients.get(name);',
    '};',
    'export async function handler() {',
    ...sends,
    "  return { statusCode: 200, body: '' };",
    '}',
    '',
  ].join('\n');
}

/**
 * Writes the floor handler of each function (`name` → the calls of its first invocation) under `dir`, and
 * returns each entry's path.
 */
export function writeFloorSources(
  dir: string,
  calls: Map<string, Record<string, number>>,
): Map<string, string> {
  mkdirSync(dir, { recursive: true });
  const entries = new Map<string, string>();
  for (const [name, counted] of calls) {
    const file = join(dir, `${name}.mjs`);
    writeFileSync(file, floorSource(counted));
    entries.set(name, file);
  }
  return entries;
}
