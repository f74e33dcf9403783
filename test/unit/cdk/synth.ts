/**
 * Test helpers: synthesize the stack the way `cdk synth` does (cdk.json's feature flags), with bundling
 * skipped unless asked for, and read a function's IAM statements back from the template.
 */
import { readFileSync } from 'node:fs';
import { App, type CfnResource, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { TorchxServerlessStack, type TorchxServerlessStackProps } from '../../../cdk/stack.js';

/** cdk.json's context: `new App()` does not read it, so tests pass it explicitly. */
export const CDK_JSON_CONTEXT: Record<string, unknown> = JSON.parse(
  readFileSync(new URL('../../../cdk.json', import.meta.url), 'utf8'),
).context;

/** A synthesized stack and its template. */
export interface Synthesized {
  readonly app: App;
  readonly stack: TorchxServerlessStack;
  readonly template: Template;
}

/** An example configuration with every scoping prop set. */
export const CONFIGURED: TorchxServerlessStackProps = {
  stageName: 'prod',
  batchJobQueues: ['gpu-queue', 'arn:aws:batch:us-west-2:123456789012:job-queue/cpu-queue'],
  batchJobRoleArns: [
    'arn:aws:iam::123456789012:role/TrainingJobRole',
    'arn:aws:iam::123456789012:role/BatchExecutionRole',
  ],
  sageMakerExecutionRoleArns: ['arn:aws:iam::123456789012:role/SageMakerTraining'],
};

/** Options of {@link testApp}. */
export interface TestAppOptions {
  /** Bundle the functions with rolldown (seconds per function). @default false */
  readonly bundle?: boolean;
  /** Where the cloud assembly goes. @default - a temporary directory of CDK's */
  readonly outdir?: string;
  /**
   * Run CDK's built-in CloudFormation template validation at synth. Starting its engine (WebAssembly, every
   * resource schema) costs about 5 s of CPU per test process, so only the cdk-nag test, which runs it on
   * purpose, turns it on. @default false
   */
  readonly validate?: boolean;
}

/** A fresh app with cdk.json's context, bundling skipped and template validation off unless asked for. */
export function testApp(options: TestAppOptions = {}): App {
  return new App({
    builtinCloudFormationValidation: options.validate ?? false,
    context: { ...CDK_JSON_CONTEXT, ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) },
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
  });
}

/** Builds the stack in a fresh {@link testApp}, without synthesizing it. */
export function buildStack(
  props: TorchxServerlessStackProps = {},
  options: Pick<TestAppOptions, 'bundle' | 'outdir'> = {},
): { app: App; stack: TorchxServerlessStack } {
  const app = testApp(options);
  const stack = new TorchxServerlessStack(app, 'TorchxServerless-test', props);
  return { app, stack };
}

/** Builds and synthesizes the stack. */
export function synthesize(props: TorchxServerlessStackProps = {}): Synthesized {
  const { app, stack } = buildStack(props);
  return { app, stack, template: Template.fromStack(stack) };
}

/** Logical id of a construct's CloudFormation resource. */
export function logicalIdOf(resource: CfnResource): string {
  return Stack.of(resource).getLogicalId(resource);
}

/** The CloudFormation function resource of a function by name (`Run`, `StateChange`, …). */
export function cfnFunctionOf(stack: TorchxServerlessStack, name: string): CfnFunction {
  const fn = stack.txs.functions[name];
  if (fn === undefined) throw new Error(`no function ${name}`);
  return fn.node.defaultChild as CfnFunction;
}

/** One IAM statement with CloudFormation references rendered as `${Logical.Arn}` / `${AWS::Region}`. */
export interface RenderedStatement {
  readonly actions: readonly string[];
  readonly resources: readonly string[];
  readonly condition?: unknown;
}

/** Renders intrinsic functions to strings so that resources can be compared as text. */
export function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    if ('Ref' in object) return `\${${String(object.Ref)}}`;
    if ('Fn::GetAtt' in object) {
      const [id, attribute] = object['Fn::GetAtt'] as [string, string];
      return `\${${id}.${attribute}}`;
    }
    if ('Fn::Join' in object) {
      const [separator, parts] = object['Fn::Join'] as [string, unknown[]];
      return parts.map(render).join(separator);
    }
  }
  return JSON.stringify(value);
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** Every statement of a function's role (its default policy), rendered. */
export function statementsOf(synthesized: Synthesized, name: string): RenderedStatement[] {
  const fn = synthesized.stack.txs.functions[name];
  if (fn === undefined) throw new Error(`no function ${name}`);
  const policy = fn.role?.node.tryFindChild('DefaultPolicy')?.node.defaultChild as CfnResource | undefined;
  if (policy === undefined) return [];
  const resources = synthesized.template.toJSON().Resources as Record<string, { Properties: unknown }>;
  const properties = resources[logicalIdOf(policy)]?.Properties as {
    PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown; Condition?: unknown }[] };
  };
  return properties.PolicyDocument.Statement.map((statement) => ({
    actions: asArray(statement.Action),
    resources: asArray(statement.Resource).map(render),
    ...(statement.Condition === undefined ? {} : { condition: statement.Condition }),
  }));
}

/** The set of actions a function may call. */
export function actionsOf(synthesized: Synthesized, name: string): string[] {
  return [...new Set(statementsOf(synthesized, name).flatMap((s) => s.actions))].sort();
}

/** The resources a function may call `action` on. */
export function resourcesFor(synthesized: Synthesized, name: string, action: string): string[] {
  return statementsOf(synthesized, name)
    .filter((s) => s.actions.includes(action))
    .flatMap((s) => s.resources)
    .sort();
}

/** `arn:${AWS::Partition}:<service>:${AWS::Region}:${AWS::AccountId}:<resource>`, as {@link render} writes it. */
export function stackArn(service: string, resource: string): string {
  return `arn:\${AWS::Partition}:${service}:\${AWS::Region}:\${AWS::AccountId}:${resource}`;
}
