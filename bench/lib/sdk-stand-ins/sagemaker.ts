/** Measurement only: see ./client.ts. The instance types are the SDK's own list (an own client carries one too). */
import { client, command } from './client.js';

// The SDK's module under its file path: the package name is aliased to this file in the measured build.
// @ts-expect-error no declaration file at that path (the package's types live in dist-types)
export { TrainingInstanceType } from '../../../node_modules/@aws-sdk/client-sagemaker/dist-es/models/enums.js';
export const SageMakerClient = client({ serviceId: 'SageMaker', signing: 'sagemaker', target: 'SageMaker' });
export const CreateTrainingJobCommand = command('CreateTrainingJob');
export const DescribeTrainingJobCommand = command('DescribeTrainingJob');
export const ListTagsCommand = command('ListTags');
export const ListTrainingJobsCommand = command('ListTrainingJobs');
export const StopTrainingJobCommand = command('StopTrainingJob');
