/**
 * The CDK app: `npx cdk synth` / `npx cdk deploy`. Reads the stage and the stack's props from context (see
 * cdk/config.ts and docs/deploy.md) and checks the app with cdk-nag's AwsSolutions rules unless
 * `CDK_NAG=0`.
 *
 * @module
 */
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { readDeployConfig } from './config.js';
import { TorchxServerlessStack } from './stack.js';

const app = new App();
const config = readDeployConfig((key) => app.node.tryGetContext(key), process.env);
const stack = new TorchxServerlessStack(app, config.stackName, {
  ...config.props,
  description: `torchx-serverless control plane (${config.stage})`,
});
Tags.of(stack).add('project', 'torchx-serverless');
Tags.of(stack).add('stage', config.stage);

if (process.env.CDK_NAG !== '0') Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
