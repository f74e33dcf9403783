/** Measurement only: see ./client.ts. */
import { client, command } from './client.js';

export const BatchClient = client({ serviceId: 'Batch', signing: 'batch' });
export const CancelJobCommand = command('CancelJob');
export const DeregisterJobDefinitionCommand = command('DeregisterJobDefinition');
export const DescribeJobQueuesCommand = command('DescribeJobQueues');
export const DescribeJobsCommand = command('DescribeJobs');
export const ListJobsCommand = command('ListJobs');
export const RegisterJobDefinitionCommand = command('RegisterJobDefinition');
export const SubmitJobCommand = command('SubmitJob');
export const TerminateJobCommand = command('TerminateJob');
