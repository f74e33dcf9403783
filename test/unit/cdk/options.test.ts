import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { Table } from 'aws-cdk-lib/aws-dynamodb';
import { SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { TorchxServerlessPropsError } from '../../../cdk/constructs/prop-issues.js';
import { TorchxServerless } from '../../../cdk/constructs/torchx-serverless.js';
import type { TorchxServerlessProps } from '../../../cdk/constructs/torchx-serverless-props.js';
import { FUNCTIONS } from '../../../functions/routes.js';
import { testApp } from './synth.js';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** The construct in someone else's stack, with what `extra` builds there first (bundling skipped). */
function embed(extra: (stack: Stack) => TorchxServerlessProps, after?: (txs: TorchxServerless) => void) {
  const app = testApp();
  const stack = new Stack(app, 'Host', { env: { account: '123456789012', region: 'us-east-1' } });
  const txs = new TorchxServerless(stack, 'Txs', extra(stack));
  after?.(txs);
  return { stack, txs, template: Template.fromStack(stack) };
}

let tuned: ReturnType<typeof embed>;
let caller: Role;

beforeAll(() => {
  tuned = embed(
    (stack) => {
      const vpc = new Vpc(stack, 'Vpc', { maxAzs: 2 });
      caller = new Role(stack, 'Pipeline', { assumedBy: new ServicePrincipal('codebuild.amazonaws.com') });
      return {
        vpc,
        vpcSubnets: { subnetType: SubnetType.PRIVATE_WITH_EGRESS },
        securityGroups: [new SecurityGroup(stack, 'FnSg', { vpc })],
        memorySize: 256,
        functionMemorySize: { Run: 1024 },
        provisionedConcurrency: { Run: 2 },
        customDomain: {
          domainName: 'txs.example.com',
          certificate: Certificate.fromCertificateArn(
            stack,
            'Cert',
            'arn:aws:acm:us-east-1:123456789012:certificate/abc',
          ),
          basePath: 'txs',
        },
        eventBus: new EventBus(stack, 'Shared', { eventBusName: 'shared' }),
        dashboard: { dashboardName: 'txs' },
      };
    },
    (txs) => txs.grantInvoke(caller),
  );
});

/** The construct's functions (traced), not CDK's own custom-resource functions. */
const functionsOf = (template: Template) =>
  Object.values(template.findResources('AWS::Lambda::Function') as Resources).filter(
    (fn) => fn.Properties.TracingConfig !== undefined,
  );

describe('TorchxServerless options', () => {
  it('places every function in the VPC subnets with the given security group, and lets it manage ENIs', () => {
    const fns = functionsOf(tuned.template);
    expect(fns).toHaveLength(FUNCTIONS.length);
    for (const fn of fns) {
      const vpcConfig = fn.Properties.VpcConfig as { SubnetIds: unknown[]; SecurityGroupIds: unknown[] };
      expect(vpcConfig.SubnetIds).toHaveLength(2);
      expect(vpcConfig.SecurityGroupIds).toHaveLength(1);
    }
    tuned.template.hasResourceProperties('AWS::IAM::Role', {
      ManagedPolicyArns: Match.arrayWith([
        Match.objectLike({
          'Fn::Join': Match.arrayWith([
            Match.arrayWith([Match.stringLikeRegexp('AWSLambdaVPCAccessExecutionRole')]),
          ]),
        }),
      ]),
    });
  });

  it('sizes memory per function over the default', () => {
    const memory = (name: string) =>
      (tuned.txs.functions[name]?.node.defaultChild as { memorySize?: number } | undefined)?.memorySize;
    expect(memory('Run')).toBe(1024);
    expect(memory('Status')).toBe(256);
    expect(memory('Reconciler')).toBe(256);
  });

  it('gives provisioned concurrency through a live alias that the API invokes', () => {
    tuned.template.resourceCountIs('AWS::Lambda::Alias', 1);
    tuned.template.hasResourceProperties('AWS::Lambda::Alias', {
      Name: 'live',
      ProvisionedConcurrencyConfig: { ProvisionedConcurrentExecutions: 2 },
    });
    const post = Object.values(tuned.template.findResources('AWS::ApiGateway::Method') as Resources).find(
      (m) => m.Properties.HttpMethod === 'POST' && JSON.stringify(m.Properties).includes('RunLive'),
    );
    expect(post).toBeDefined();
  });

  it('maps a custom domain (TLS 1.2, regional) to the stage under the base path', () => {
    tuned.template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'txs.example.com',
      SecurityPolicy: 'TLS_1_2',
      EndpointConfiguration: { Types: ['REGIONAL'] },
    });
    tuned.template.hasResourceProperties('AWS::ApiGateway::BasePathMapping', { BasePath: 'txs' });
  });

  it('puts AppState events on an existing bus and creates none', () => {
    tuned.template.resourceCountIs('AWS::Events::EventBus', 1);
    for (const fn of functionsOf(tuned.template))
      expect(JSON.stringify(fn.Properties.Environment)).toMatch(/"TXS_EVENT_BUS_NAME":\{"Ref":"Shared/);
  });

  it('builds a dashboard of the API, every function, the dead-letter queue and the table', () => {
    const [dashboard] = Object.values(
      tuned.template.findResources('AWS::CloudWatch::Dashboard') as Resources,
    );
    expect(dashboard?.Properties.DashboardName).toBe('txs');
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    for (const fn of FUNCTIONS) expect(body).toContain(`\\"label\\":\\"${fn.name}\\"`);
    for (const metric of ['5XXError', 'Latency', 'ApproximateNumberOfMessagesVisible', 'ThrottledRequests'])
      expect(body).toContain(metric);
  });

  it('grants a caller execute-api:Invoke on this stage only', () => {
    const policies = Object.values(tuned.template.findResources('AWS::IAM::Policy') as Resources).filter(
      (p) => JSON.stringify(p.Properties.Roles).includes('Pipeline'),
    );
    expect(policies).toHaveLength(1);
    const text = JSON.stringify(policies[0]?.Properties.PolicyDocument);
    expect(text).toContain('execute-api:Invoke');
    // arn:…:execute-api:<region>:<account>:<api id>/<this stage>/*/* (any method, any path, this stage)
    expect(text).toMatch(/"Ref":"TxsApiDeploymentStagedev[0-9A-F]+"\},"\/\*\/\*"/);
  });

  it('rejects sizing for a function that does not exist, naming the functions that do', () => {
    expect(() => embed(() => ({ functionMemorySize: { Runn: 512 } }))).toThrow(TorchxServerlessPropsError);
    expect(() => embed(() => ({ provisionedConcurrency: { Run: 0 } }))).toThrow(
      /provisionedConcurrency\.Run: must be a whole number of at least 1/,
    );
  });

  it('uses an existing table with its stream: creates none, grants on it, and feeds the outbox from its stream', () => {
    const tableArn = 'arn:aws:dynamodb:us-east-1:123456789012:table/shared-txs';
    const tableStreamArn = `${tableArn}/stream/2026-11-23T00:00:00.000`;
    const { template } = embed((stack) => ({
      table: Table.fromTableAttributes(stack, 'Shared', { tableArn, tableStreamArn }),
    }));
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { EventSourceArn: tableStreamArn });
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain(`${tableArn}/index/byOwner`);
    for (const fn of functionsOf(template))
      expect(
        (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables.TXS_TABLE_NAME,
      ).toBe('shared-txs');
  });

  it('refuses an existing table imported without its stream, naming the prop and the fix', () => {
    expect(() =>
      embed((stack) => ({
        table: Table.fromTableArn(stack, 'NoStream', 'arn:aws:dynamodb:us-east-1:123456789012:table/t'),
      })),
    ).toThrow(/table: has no stream.*tableStreamArn/);
  });

  it('adds no alias, domain or dashboard by default', () => {
    const { template } = embed(() => ({}));
    template.resourceCountIs('AWS::Lambda::Alias', 0);
    template.resourceCountIs('AWS::ApiGateway::DomainName', 0);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    for (const fn of functionsOf(template)) expect(fn.Properties.VpcConfig).toBeUndefined();
  });
});
