import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_FUNCTIONS, ROUTES } from '../../../functions/routes.js';
import { ENV } from '../../../functions/shared/env-names.js';
import { APP_TABLE } from '../../../lib/store/table.js';
import {
  CONFIGURED,
  cfnFunctionOf,
  logicalIdOf,
  render,
  type Synthesized,
  stackArn,
  synthesize,
} from './synth.js';

const FUNCTION_NAMES = [
  ...ROUTES.map((r) => r.name),
  EVENT_FUNCTIONS.stateChange.name,
  EVENT_FUNCTIONS.reconciler.name,
  EVENT_FUNCTIONS.publisher.name,
];

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; [key: string]: unknown }
>;

const ALARM_TOPIC = 'arn:aws:sns:us-east-1:123456789012:txs-alarms';
const WEB_ACL = 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/txs/abc';

let defaults: Synthesized;
let configured: Synthesized;
/** Every optional setting at once (one synth instead of one per setting). */
let tuned: Synthesized;

beforeAll(() => {
  defaults = synthesize();
  configured = synthesize(CONFIGURED);
  tuned = synthesize({
    tableRemovalPolicy: RemovalPolicy.DESTROY,
    sessionName: 'research',
    recordRetentionDays: 90,
    schedulers: ['aws_batch'],
    batchJobQueues: ['gpu-queue'],
    apiLogging: true,
    throttlingRateLimit: 5,
    throttlingBurstLimit: 10,
    webAclArn: WEB_ACL,
    eventBusName: 'txs-events',
    reconcileInterval: Duration.hours(1),
    alarmTopicArn: ALARM_TOPIC,
  });
});

function resources(s: Synthesized, type: string): Resources {
  return s.template.findResources(type) as Resources;
}

describe('TorchxServerless table', () => {
  it('mirrors lib/store/table.ts: keys, on-demand billing, PITR, TTL and every index', () => {
    const table = Object.values(resources(defaults, 'AWS::DynamoDB::Table'));
    expect(table).toHaveLength(1);
    const props = table[0]?.Properties ?? {};
    expect(props.BillingMode).toBe('PAY_PER_REQUEST');
    expect(props.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(props.TimeToLiveSpecification).toEqual({
      AttributeName: APP_TABLE.timeToLiveAttribute,
      Enabled: true,
    });
    expect(props.KeySchema).toEqual([
      { AttributeName: APP_TABLE.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: APP_TABLE.sortKey.name, KeyType: 'RANGE' },
    ]);
    const indexes = (props.GlobalSecondaryIndexes as { IndexName: string }[]).map((index) => index);
    expect(indexes).toEqual(
      APP_TABLE.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: index.projection },
      })),
    );
    const types = Object.fromEntries(
      (props.AttributeDefinitions as { AttributeName: string; AttributeType: string }[]).map((d) => [
        d.AttributeName,
        d.AttributeType,
      ]),
    );
    for (const index of APP_TABLE.indexes) {
      expect(types[index.partitionKey.name]).toBe(index.partitionKey.type);
      expect(types[index.sortKey.name]).toBe(index.sortKey.type);
    }
  });

  it('is retained with deletion protection by default', () => {
    const [table] = Object.values(resources(defaults, 'AWS::DynamoDB::Table'));
    expect(table?.DeletionPolicy).toBe('Retain');
    expect(table?.Properties.DeletionProtectionEnabled).toBe(true);
  });

  it('is deleted with the stack, without deletion protection, when tableRemovalPolicy is DESTROY', () => {
    const [table] = Object.values(resources(tuned, 'AWS::DynamoDB::Table'));
    expect(table?.DeletionPolicy).toBe('Delete');
    expect(table?.Properties.DeletionProtectionEnabled).toBe(false);
  });
});

describe('TorchxServerless functions', () => {
  it('has one function per route and per event source', () => {
    expect(Object.keys(defaults.stack.txs.functions).sort()).toEqual([...FUNCTION_NAMES].sort());
    expect(Object.keys(resources(defaults, 'AWS::Lambda::Function'))).toHaveLength(FUNCTION_NAMES.length);
  });

  it.each(FUNCTION_NAMES)('runs %s on Node.js 22, arm64, with X-Ray tracing and the ESM handler', (name) => {
    const props = defaults.template.toJSON().Resources[logicalIdOf(cfnFunctionOf(defaults.stack, name))]
      .Properties as Record<string, unknown>;
    expect(props.Runtime).toBe('nodejs22.x');
    expect(props.Architectures).toEqual(['arm64']);
    expect(props.TracingConfig).toEqual({ Mode: 'Active' });
    expect(props.Handler).toBe('index.handler');
  });

  it.each(FUNCTION_NAMES)('gives %s its own log group with a retention', (name) => {
    const props = defaults.template.toJSON().Resources[logicalIdOf(cfnFunctionOf(defaults.stack, name))]
      .Properties as { LoggingConfig: { LogGroup: unknown } };
    const logGroupId = render(props.LoggingConfig.LogGroup).replace(/^\$\{|\}$/g, '');
    const logGroup = defaults.template.toJSON().Resources[logGroupId];
    expect(logGroup.Type).toBe('AWS::Logs::LogGroup');
    expect(logGroup.Properties.RetentionInDays).toBe(30);
  });

  it('sets the environment the handlers read (functions/shared/env-names.ts)', () => {
    const props = configured.template.toJSON().Resources[logicalIdOf(cfnFunctionOf(configured.stack, 'Run'))]
      .Properties as { Environment: { Variables: Record<string, unknown> } };
    const env = props.Environment.Variables;
    expect(render(env[ENV.tableName])).toBe(
      `\${${logicalIdOf(configured.stack.txs.table.node.defaultChild as never)}}`,
    );
    expect(render(env[ENV.eventBusName])).toMatch(/^\$\{TxsEvents\w+\}$/);
    expect(env[ENV.schedulers]).toBe('aws_batch,aws_sagemaker');
    expect(env[ENV.batchQueues]).toBe(CONFIGURED.batchJobQueues?.join(','));
    // Source maps are not decoded at run time (a cold-start cost); the .map files are kept for offline use.
    expect(env.NODE_OPTIONS).toBeUndefined();
  });

  it('passes optional settings only when given', () => {
    const env = (
      tuned.template.toJSON().Resources[logicalIdOf(cfnFunctionOf(tuned.stack, 'Status'))].Properties as {
        Environment: { Variables: Record<string, unknown> };
      }
    ).Environment.Variables;
    expect(env[ENV.sessionName]).toBe('research');
    expect(env[ENV.retentionDays]).toBe('90');
    expect(env[ENV.schedulers]).toBe('aws_batch');
    const defaultEnv = (
      defaults.template.toJSON().Resources[logicalIdOf(cfnFunctionOf(defaults.stack, 'Status'))]
        .Properties as { Environment: { Variables: Record<string, unknown> } }
    ).Environment.Variables;
    expect(Object.keys(defaultEnv)).not.toContain(ENV.sessionName);
    expect(Object.keys(defaultEnv)).not.toContain(ENV.retentionDays);
    expect(Object.keys(defaultEnv)).not.toContain(ENV.batchQueues);
  });
});

describe('TorchxServerless REST API', () => {
  it('has one method per route, each with IAM authorization and its own function', () => {
    const methods = Object.values(resources(defaults, 'AWS::ApiGateway::Method'));
    expect(methods).toHaveLength(ROUTES.length);
    for (const method of methods) expect(method.Properties.AuthorizationType).toBe('AWS_IAM');
    for (const route of ROUTES) {
      const fnId = logicalIdOf(cfnFunctionOf(defaults.stack, route.name));
      const matching = methods.filter(
        (m) =>
          m.Properties.HttpMethod === route.method &&
          JSON.stringify(m.Properties.Integration).includes(`"${fnId}"`),
      );
      expect(matching, `${route.method} ${route.path}`).toHaveLength(1);
    }
  });

  it('builds the resource tree of the route paths', () => {
    const paths = new Map<string, string>();
    const all = resources(defaults, 'AWS::ApiGateway::Resource');
    const pathOf = (id: string): string => {
      const cached = paths.get(id);
      if (cached !== undefined) return cached;
      const resource = all[id];
      const parent = render(resource?.Properties.ParentId);
      const parentPath = parent.includes('RootResourceId') ? '' : pathOf(parent.replace(/^\$\{|\}$/g, ''));
      const path = `${parentPath}/${String(resource?.Properties.PathPart)}`;
      paths.set(id, path);
      return path;
    };
    const methods = Object.values(resources(defaults, 'AWS::ApiGateway::Method'));
    const routes = methods
      .map(
        (m) =>
          `${String(m.Properties.HttpMethod)} ${pathOf(render(m.Properties.ResourceId).replace(/^\$\{|\}$/g, ''))}`,
      )
      .sort();
    expect(routes).toEqual(ROUTES.map((r) => `${r.method} ${r.path}`).sort());
  });

  it('validates path parameters in API Gateway and leaves bodies to the handlers', () => {
    defaults.template.resourceCountIs('AWS::ApiGateway::RequestValidator', 1);
    defaults.template.hasResourceProperties('AWS::ApiGateway::RequestValidator', {
      ValidateRequestParameters: true,
      ValidateRequestBody: false,
    });
  });

  it('requires the path parameters of each route', () => {
    for (const method of Object.values(resources(defaults, 'AWS::ApiGateway::Method'))) {
      const required = Object.keys((method.Properties.RequestParameters as Record<string, boolean>) ?? {});
      expect(method.Properties.RequestValidatorId).toBeDefined();
      for (const name of required) expect(name).toMatch(/^method\.request\.path\.(scheduler|appId)$/);
    }
    const withParams = Object.values(resources(defaults, 'AWS::ApiGateway::Method')).filter(
      (m) => Object.keys((m.Properties.RequestParameters as object) ?? {}).length === 2,
    );
    expect(withParams).toHaveLength(ROUTES.filter((r) => r.path.includes('{appId}')).length);
  });

  it('throttles and traces the stage, without API logs or the account-wide logging role by default', () => {
    defaults.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'dev',
      TracingEnabled: true,
      AccessLogSetting: Match.absent(),
      MethodSettings: [
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 50,
          ThrottlingBurstLimit: 100,
          LoggingLevel: 'OFF',
          DataTraceEnabled: false,
        }),
      ],
    });
    defaults.template.resourceCountIs('AWS::ApiGateway::Account', 0);
    configured.template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: 'prod' });
  });

  it('logs access and errors to CloudWatch with apiLogging, still without replacing the account role', () => {
    tuned.template.hasResourceProperties('AWS::ApiGateway::Stage', {
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('"caller"') },
      MethodSettings: [
        Match.objectLike({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10, LoggingLevel: 'ERROR' }),
      ],
    });
    tuned.template.resourceCountIs('AWS::ApiGateway::Account', 0);
  });

  it("answers API Gateway's own 4xx and 5xx in the API's error shape", () => {
    for (const type of ['DEFAULT_4XX', 'DEFAULT_5XX']) {
      defaults.template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
        ResponseType: type,
        ResponseTemplates: { 'application/json': Match.stringLikeRegexp('^\\{"error":\\{"code":') },
      });
    }
  });

  it('is regional and lets only API Gateway invoke each route function, from its own method', () => {
    defaults.template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      Name: 'torchx-serverless-dev',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    const permissions = Object.values(resources(defaults, 'AWS::Lambda::Permission')).filter(
      (p) => p.Properties.Principal === 'apigateway.amazonaws.com',
    );
    expect(permissions).toHaveLength(ROUTES.length);
    for (const permission of permissions) {
      expect(render(permission.Properties.SourceArn)).not.toMatch(/test-invoke-stage/);
    }
  });

  it('associates a WAF web ACL when one is given', () => {
    tuned.template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', { WebACLArn: WEB_ACL });
    defaults.template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 0);
  });
});

describe('TorchxServerless state-change events', () => {
  const stateChangeTarget = (s: Synthesized) => ({
    Arn: { 'Fn::GetAtt': [logicalIdOf(cfnFunctionOf(s.stack, 'StateChange')), 'Arn'] },
    DeadLetterConfig: {
      Arn: { 'Fn::GetAtt': [logicalIdOf(s.stack.txs.deadLetterQueue.node.defaultChild as never), 'Arn'] },
    },
    RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 7200 },
  });

  it('routes Batch job state changes to the state-change function, with retries and a DLQ', () => {
    configured.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ source: ['aws.batch'], 'detail-type': ['Batch Job State Change'] }),
      Targets: [Match.objectLike(stateChangeTarget(configured))],
    });
    const [batchRule] = Object.values(resources(configured, 'AWS::Events::Rule')).filter((r) =>
      JSON.stringify(r.Properties.EventPattern ?? {}).includes('aws.batch'),
    );
    expect(batchRule?.Properties.EventBusName).toBeUndefined(); // the default bus, where AWS services publish
  });

  it('routes Batch job queue blocked events of the configured queues to the state-change function', () => {
    configured.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.batch'],
        'detail-type': ['Batch Job Queue Blocked'],
        detail: { jobQueue: Match.anyValue() },
      },
      Targets: [Match.objectLike(stateChangeTarget(configured))],
    });
  });

  it('has no Batch rule without queues (no aws_batch)', () => {
    const rules = Object.values(resources(defaults, 'AWS::Events::Rule'));
    expect(rules.some((r) => JSON.stringify(r.Properties.EventPattern ?? {}).includes('aws.batch'))).toBe(
      false,
    );
  });

  it('matches only the configured queues when batchJobQueues is set', () => {
    configured.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.batch'],
        'detail-type': ['Batch Job State Change'],
        detail: { jobQueue: Match.anyValue() },
      },
    });
    const [batchRule] = Object.values(resources(configured, 'AWS::Events::Rule')).filter((r) =>
      JSON.stringify(r.Properties.EventPattern ?? {}).includes('aws.batch'),
    );
    const queues = (batchRule!.Properties.EventPattern as { detail: { jobQueue: unknown[] } }).detail
      .jobQueue;
    expect(queues.map(render)).toEqual([
      stackArn('batch', 'job-queue/gpu-queue'),
      'arn:aws:batch:us-west-2:123456789012:job-queue/cpu-queue',
    ]);
  });

  it('routes SageMaker training job state changes to the state-change function, with retries and a DLQ', () => {
    defaults.template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: { source: ['aws.sagemaker'], 'detail-type': ['SageMaker Training Job State Change'] },
      Targets: [Match.objectLike(stateChangeTarget(defaults))],
    });
  });

  it('sends failed invocations of the state-change function to the same DLQ after two Lambda retries', () => {
    defaults.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: logicalIdOf(cfnFunctionOf(defaults.stack, 'StateChange')) },
      MaximumRetryAttempts: 2,
      DestinationConfig: {
        OnFailure: {
          Destination: {
            'Fn::GetAtt': [logicalIdOf(defaults.stack.txs.deadLetterQueue.node.defaultChild as never), 'Arn'],
          },
        },
      },
    });
  });

  it('keeps dead letters encrypted, for 14 days, and lets only the state-change rules send to the queue over TLS', () => {
    defaults.template.hasResourceProperties('AWS::SQS::Queue', {
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
    const [policy] = Object.values(resources(defaults, 'AWS::SQS::QueuePolicy'));
    const statements = (policy!.Properties.PolicyDocument as { Statement: Record<string, unknown>[] })
      .Statement;
    expect(
      statements.some(
        (s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('aws:SecureTransport'),
      ),
    ).toBe(true);
    const sends = statements.filter((s) => s.Effect === 'Allow');
    expect(sends).toHaveLength(1); // the SageMaker rule: no Batch rule without queues
    const [configuredPolicy] = Object.values(resources(configured, 'AWS::SQS::QueuePolicy'));
    expect(
      (configuredPolicy!.Properties.PolicyDocument as { Statement: { Effect: string }[] }).Statement.filter(
        (s) => s.Effect === 'Allow',
      ),
    ).toHaveLength(3); // Batch state changes, Batch queue blocked, SageMaker
    for (const send of sends) {
      expect(send.Principal).toEqual({ Service: 'events.amazonaws.com' });
      expect(JSON.stringify(send.Condition)).toContain('aws:SourceArn');
    }
  });

  it('has a custom bus for the normalized events', () => {
    defaults.template.resourceCountIs('AWS::Events::EventBus', 1);
    expect(
      Object.values(resources(defaults, 'AWS::Events::Rule')).every(
        (r) => r.Properties.EventBusName === undefined,
      ),
    ).toBe(true);
    tuned.template.hasResourceProperties('AWS::Events::EventBus', { Name: 'txs-events' });
  });
});

describe('TorchxServerless reconciler', () => {
  it('runs the reconciler every 5 minutes by default, without retries', () => {
    defaults.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(5 minutes)',
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [logicalIdOf(cfnFunctionOf(defaults.stack, 'Reconciler')), 'Arn'] },
          RetryPolicy: { MaximumRetryAttempts: 0 },
        }),
      ],
    });
  });

  it('follows reconcileInterval', () => {
    tuned.template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 hour)' });
  });
});

describe('TorchxServerless alarms', () => {
  it('alarms on any dead letter', () => {
    defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
    });
  });

  it.each(FUNCTION_NAMES)('alarms on errors of %s', (name) => {
    defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Namespace: 'AWS/Lambda',
      Dimensions: [
        { Name: 'FunctionName', Value: { Ref: logicalIdOf(cfnFunctionOf(defaults.stack, name)) } },
      ],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on API 5xx answers', () => {
    defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: '5XXError',
      Namespace: 'AWS/ApiGateway',
    });
  });

  it('notifies the alarm topic from every alarm when one is given', () => {
    const alarms = Object.values(resources(tuned, 'AWS::CloudWatch::Alarm'));
    // Per function, the DLQ and 5xx alarms, and the outbox's unpublished-changes and stream-behind alarms.
    expect(alarms.length).toBe(FUNCTION_NAMES.length + 4);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([ALARM_TOPIC]);
    for (const alarm of Object.values(resources(defaults, 'AWS::CloudWatch::Alarm')))
      expect(alarm.Properties.AlarmActions).toBeUndefined();
  });
});

describe('TorchxServerlessStack outputs', () => {
  it('outputs the API URL, table, bus, the two dead-letter queues and the workspace bucket', () => {
    const outputs = defaults.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    expect(Object.keys(outputs).sort()).toEqual(
      [
        'ApiUrl',
        'DeadLetterQueueUrl',
        'EventBusArn',
        'EventBusName',
        'OutboxDeadLetterQueueUrl',
        'TableName',
        'WorkspaceBucketName',
      ].sort(),
    );
    expect(render(outputs.ApiUrl?.Value)).toMatch(
      /^https:\/\/\$\{TxsApi\w+\}\.execute-api\.\$\{AWS::Region\}\.\$\{AWS::URLSuffix\}\/\$\{TxsApiDeploymentStagedev\w+\}\/$/,
    );
    expect(render(outputs.TableName?.Value)).toBe(
      `\${${logicalIdOf(defaults.stack.txs.table.node.defaultChild as never)}}`,
    );
  });
});

describe('TorchxServerless outbox', () => {
  it('streams new and old images of the app table to the publisher, reporting batch item failures', () => {
    const table = logicalIdOf(defaults.stack.txs.table.node.defaultChild as never);
    defaults.template.hasResourceProperties('AWS::DynamoDB::Table', {
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
    defaults.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalIdOf(cfnFunctionOf(defaults.stack, 'Publisher')) },
      EventSourceArn: { 'Fn::GetAtt': [table, 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      ParallelizationFactor: 1,
      MaximumRetryAttempts: 10,
      DestinationConfig: {
        OnFailure: {
          Destination: {
            'Fn::GetAtt': [
              logicalIdOf(defaults.stack.txs.outbox.deadLetterQueue.node.defaultChild as never),
              'Arn',
            ],
          },
        },
      },
    });
  });

  it('alarms when a change lands in the outbox dead-letter queue', () => {
    const queue = logicalIdOf(defaults.stack.txs.outbox.deadLetterQueue.node.defaultChild as never);
    defaults.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
      Threshold: 1,
    });
  });
});
