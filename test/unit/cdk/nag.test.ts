import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TorchxServerlessStack } from '../../../cdk/stack.js';
import { CDK_JSON_CONTEXT, CONFIGURED } from './synth.js';

interface Violation {
  ruleName: string;
  violatingConstructs: { constructPath: string }[];
}

let outdir: string;
let violations: Violation[];

/**
 * One synth, as `npm run synth` does it (cdk-nag plus CDK's built-in CloudFormation template validation),
 * checks both real stacks (defaults, and configured with queues and roles) and a canary stack with a finding
 * nobody acknowledged: only the canary may be reported, which proves the checks run.
 */
beforeAll(() => {
  outdir = mkdtempSync(path.join(tmpdir(), 'txs-nag-'));
  const app = new App({ outdir, context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  new TorchxServerlessStack(app, 'Defaults');
  new TorchxServerlessStack(app, 'Configured', CONFIGURED);
  new Queue(new Stack(app, 'Canary'), 'Unacknowledged');
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  expect(() => app.synth()).toThrow(/Acknowledge with 'AwsSolutions::AwsSolutions-SQS4'/);
  const report = JSON.parse(readFileSync(path.join(outdir, 'validation-report.json'), 'utf8')) as {
    pluginReports: { violations: Violation[] }[];
  };
  violations = report.pluginReports.flatMap((r) => r.violations);
});

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

  it('still reports a finding nobody acknowledged (the check is live)', () => {
    expect(violations.map((v) => v.ruleName).sort()).toEqual(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']);
    expect(violations.flatMap(pathsOf)).toEqual([
      'Canary/Unacknowledged/Resource',
      'Canary/Unacknowledged/Resource',
    ]);
  });
});
