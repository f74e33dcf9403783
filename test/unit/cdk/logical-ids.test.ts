import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { synthesize } from './synth.js';

/**
 * Resources whose logical id is part of a deployment's state: CloudFormation replaces a resource whose id
 * changes, which for these loses data (records, messages, logs), changes what callers hold (the API's URL,
 * the bus) or detaches what protects it (the WAF association). A refactoring of the construct tree must keep
 * every one of these ids; a new resource of these types is added here on purpose.
 */
const STATEFUL_TYPES = new Set([
  'AWS::DynamoDB::Table',
  'AWS::SQS::Queue',
  'AWS::Logs::LogGroup',
  'AWS::S3::Bucket',
  'AWS::Events::EventBus',
  'AWS::ApiGateway::RestApi',
  'AWS::ApiGateway::Stage',
  'AWS::WAFv2::WebACLAssociation',
  'AWS::CloudWatch::Dashboard',
]);

/** `<type> <logical id>` of every stateful resource of a template, sorted. */
function statefulIdsOf(template: Template): string[] {
  const resources = template.toJSON().Resources as Record<string, { Type: string }>;
  return Object.entries(resources)
    .filter(([, resource]) => STATEFUL_TYPES.has(resource.Type))
    .map(([id, resource]) => `${resource.Type} ${id}`)
    .sort();
}

/** The function log groups, by the function names of functions/routes.ts. */
const FUNCTION_LOG_GROUPS = [
  'AWS::Logs::LogGroup TxsCancelLogsF174BBF5',
  'AWS::Logs::LogGroup TxsComponentsLogs62BFE781',
  'AWS::Logs::LogGroup TxsCountsLogs5FE36A97',
  'AWS::Logs::LogGroup TxsDeleteLogsD1D69379',
  'AWS::Logs::LogGroup TxsDryrunLogsD877868E',
  'AWS::Logs::LogGroup TxsListLogs8E274D29',
  'AWS::Logs::LogGroup TxsLogsE1971E67',
  'AWS::Logs::LogGroup TxsOpenApiLogs8DAA2126',
  'AWS::Logs::LogGroup TxsPublisherLogs24FB8C4C',
  'AWS::Logs::LogGroup TxsReconcilerLogs2A266D35',
  'AWS::Logs::LogGroup TxsRunLogs7CE8B861',
  'AWS::Logs::LogGroup TxsSchedulersLogs2613C84D',
  'AWS::Logs::LogGroup TxsStateChangeLogs5163E8CD',
  'AWS::Logs::LogGroup TxsStatusLogsCD26AD2B',
  'AWS::Logs::LogGroup TxsWorkspacesLogs61530791',
];

describe('logical ids of stateful resources', () => {
  it('keeps those of the default stack as deployed stacks have them', () => {
    expect(statefulIdsOf(synthesize().template)).toEqual(
      [
        'AWS::ApiGateway::RestApi TxsApi2A2B5E6E',
        'AWS::ApiGateway::Stage TxsApiDeploymentStagedevFB862B17',
        'AWS::DynamoDB::Table TxsAppsFF31C372',
        'AWS::Events::EventBus TxsEvents7138A38D',
        ...FUNCTION_LOG_GROUPS,
        'AWS::S3::Bucket TxsWorkspaceArchivesA5D1D412',
        'AWS::SQS::Queue TxsOutboxUnpublishedChanges4A8577B1',
        'AWS::SQS::Queue TxsStateChangeDeadLetters12163B87',
      ].sort(),
    );
  });

  it('keeps those of the optional API logs, web ACL association and dashboard', () => {
    const { template } = synthesize({
      apiLogging: true,
      webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/txs/1',
      dashboard: { dashboardName: 'txs' },
    });
    expect(statefulIdsOf(template)).toEqual(
      expect.arrayContaining([
        'AWS::Logs::LogGroup TxsApiAccessLogs1CB2D3E7',
        'AWS::WAFv2::WebACLAssociation TxsApiWebAcl852E1594',
        'AWS::CloudWatch::Dashboard TxsDashboardBB5774F7',
      ]),
    );
  });
});
