import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CfnResource, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TorchxServerlessStack } from '../../../cdk/stack.js';
import { CONFIGURED, testApp } from './synth.js';

interface Violation {
  ruleName: string;
  violatingConstructs: { constructPath: string }[];
}

let outdir: string;
let violations: Violation[];

/**
 * Synthesizing and checking takes a few seconds of CPU, most of it starting the CloudFormation validation
 * engine (WebAssembly and every resource schema), a fixed cost paid once per process. On a loaded machine
 * (the whole suite on two cores) that stretches several-fold, so this one hook gets a budget of its own
 * rather than the suite's 30 s.
 */
const SYNTH_BUDGET_MS = 180_000;

/**
 * One synth, as `npm run synth` does it (cdk-nag plus CDK's built-in CloudFormation template validation),
 * checks three real stacks (defaults; configured with queues and roles; the same, deleted with DESTROY) and
 * a canary stack with a finding of each check that nobody acknowledged: only the canary may be reported,
 * which proves both checks run. Every case reads this one report.
 */
beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'txs-nag-'));
  const app = testApp({ outdir, validate: true });
  new TorchxServerlessStack(app, 'Defaults');
  new TorchxServerlessStack(app, 'Configured', CONFIGURED);
  new TorchxServerlessStack(app, 'Destroyed', { ...CONFIGURED, tableRemovalPolicy: RemovalPolicy.DESTROY });
  const canary = new Stack(app, 'Canary');
  new Queue(canary, 'Unacknowledged');
  new CfnResource(canary, 'Malformed', {
    type: 'AWS::SQS::Queue',
    properties: { VisibilityTimeout: 'soon' },
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  expect(() => app.synth()).toThrow(/Acknowledge with 'AwsSolutions::AwsSolutions-SQS4'/);
  const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { violations: Violation[] }[];
  };
  violations = report.pluginReports.flatMap((r) => r.violations);
}, SYNTH_BUDGET_MS);

afterAll(() => {
  if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
});

const pathsOf = (violation: Violation) => violation.violatingConstructs.map((c) => c.constructPath);

describe('cdk-nag AwsSolutions and CloudFormation template validation', () => {
  it('finds nothing unacknowledged in the default stack', () => {
    expect(violations.flatMap(pathsOf).filter((p) => p.startsWith('Defaults/'))).toEqual([]);
  });

  it('finds nothing unacknowledged in the stack configured with queues, roles and a stage', () => {
    expect(violations.flatMap(pathsOf).filter((p) => p.startsWith('Configured/'))).toEqual([]);
  });

  it('finds nothing unacknowledged in a DESTROY stack (the workspace bucket emptied by a custom resource)', () => {
    expect(violations.flatMap(pathsOf).filter((p) => p.startsWith('Destroyed/'))).toEqual([]);
  });

  it('still reports what nobody acknowledged, from cdk-nag and from the template validation (both are live)', () => {
    expect(violations.map((v) => v.ruleName).sort()).toEqual([
      'AwsSolutions-SQS3',
      'AwsSolutions-SQS4',
      // the resource schema check: a string where CloudFormation wants an integer
      'F3012',
    ]);
    expect(violations.flatMap(pathsOf).sort()).toEqual([
      'Canary/Malformed',
      'Canary/Unacknowledged/Resource',
      'Canary/Unacknowledged/Resource',
    ]);
  });
});
