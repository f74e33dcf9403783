import { readFileSync } from 'node:fs';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { TorchxServerlessStack } from './stack.js';

const context = JSON.parse(readFileSync('cdk.json', 'utf8')).context;
const app = new App({ outdir: '/tmp/nagprobe', context: { ...context, 'aws:cdk:bundling-stacks': [] } });
new TorchxServerlessStack(
  app,
  'S',
  process.env.Q ? { batchJobQueues: ['gpu'], batchJobRoleArns: ['arn:aws:iam::123456789012:role/J'] } : {},
);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
try {
  app.synth();
  console.log('synth ok');
} catch (e) {
  console.log('THROWN', String(e).slice(0, 200));
}
