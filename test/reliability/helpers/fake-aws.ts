/**
 * A fake AWS data plane for whole-handler tests and benchmarks: aws-sdk-client-mock replaces `send` on every
 * Batch, SageMaker and CloudWatch Logs client (class-level, so the container's clients are covered), and an
 * in-memory backend answers with the API's response shapes. Optional fault injection throws the SDK's own
 * error shapes (throttling, 5xx, timeouts) — including timeouts *after* the backend accepted a submission.
 */
import {
  BatchClient,
  BatchServiceException,
  CancelJobCommand,
  ClientException,
  DeregisterJobDefinitionCommand,
  DescribeJobDefinitionsCommand,
  DescribeJobsCommand,
  type JobDetail,
  ListJobsCommand,
  RegisterJobDefinitionCommand,
  type RegisterJobDefinitionCommandInput,
  SubmitJobCommand,
  TerminateJobCommand,
} from '@aws-sdk/client-batch';
import { CloudWatchLogsClient, GetLogEventsCommand } from '@aws-sdk/client-cloudwatch-logs';
import {
  CreateTrainingJobCommand,
  type CreateTrainingJobCommandInput,
  DescribeTrainingJobCommand,
  ListTagsCommand,
  SageMakerClient,
  SageMakerServiceException,
  StopTrainingJobCommand,
  type TrainingJobStatus,
} from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';

// biome-ignore lint/suspicious/noExplicitAny: one stub type for three clients; commands are typed per call.
type AnyStub = ReturnType<typeof mockClient<any, any, any>>;

/** A job the fake Batch accepted. */
export interface FakeBatchJob {
  jobId: string;
  jobName: string;
  jobQueue: string;
  status: NonNullable<JobDetail['status']>;
  createdAt: number;
  definition: RegisterJobDefinitionCommandInput;
}

/** A training job the fake SageMaker accepted. */
export interface FakeTrainingJob {
  name: string;
  status: TrainingJobStatus;
  input: CreateTrainingJobCommandInput;
  createdAt: number;
}

/** Fault injection: each call fails with probability `rate` (throttling, 5xx or a timeout, in turn). */
export interface FaultOptions {
  rate: number;
  /** Deterministic randomness for reproducible runs. */
  random: () => number;
}

/** A small deterministic PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type FaultKind = 'throttling' | 'server' | 'timeout';

function sdkError(service: 'batch' | 'sagemaker', kind: FaultKind, action: string): Error {
  if (kind === 'timeout') {
    return Object.assign(new Error(`${action}: socket timed out (injected)`), { name: 'TimeoutError' });
  }
  const Exception = service === 'batch' ? BatchServiceException : SageMakerServiceException;
  const throttled = kind === 'throttling';
  return new Exception({
    name: throttled ? 'ThrottlingException' : service === 'batch' ? 'ServerException' : 'InternalFailure',
    message: throttled ? `${action}: Rate exceeded (injected)` : `${action}: internal error (injected)`,
    $fault: throttled ? 'client' : 'server',
    $metadata: { httpStatusCode: throttled ? 429 : 500, requestId: 'injected' },
    ...(throttled ? { $retryable: { throttling: true } } : {}),
  });
}

/** The fake data plane. */
export class FakeAws {
  readonly batchJobs = new Map<string, FakeBatchJob>();
  readonly trainingJobs = new Map<string, FakeTrainingJob>();
  readonly definitions = new Map<string, RegisterJobDefinitionCommandInput>();
  /** Every call by `Client.Command` name (faulted ones included). */
  readonly calls = new Map<string, number>();
  /** Injected failures by kind. */
  readonly injected = { throttling: 0, server: 0, timeout: 0, timeoutAfterAccept: 0 };
  faults: FaultOptions | undefined;
  /** The next call of this action times out: before the backend sees it, or after it accepted it. */
  nextTimeout: { action: string; afterAccept: boolean } | undefined;
  /** The next call of this action is accepted and then never answered (a hung connection). */
  hangNext: string | undefined;
  /** Every call of this Batch action is refused as AWS refuses a bad request (a 400 `ClientException`). */
  refuse: { action: string; message: string } | undefined;
  private readonly batch: AnyStub;
  private readonly sagemaker: AnyStub;
  private readonly logs: AnyStub;
  private counter = 0;
  private faultTurn = 0;

  constructor() {
    this.batch = mockClient(BatchClient);
    this.sagemaker = mockClient(SageMakerClient);
    this.logs = mockClient(CloudWatchLogsClient);
    this.wire();
  }

  /** Stops faking (restores the real `send`). */
  restore(): void {
    this.batch.restore();
    this.sagemaker.restore();
    this.logs.restore();
  }

  /** Calls so far, and resets the counters. */
  takeCalls(): Record<string, number> {
    const out = Object.fromEntries([...this.calls.entries()].sort());
    this.calls.clear();
    return out;
  }

  /** Moves a Batch job (by name) to `status`. */
  setBatchStatus(jobName: string, status: FakeBatchJob['status']): void {
    for (const job of this.batchJobs.values()) if (job.jobName === jobName) job.status = status;
  }

  /** Moves a training job to `status`. */
  setTrainingStatus(name: string, status: TrainingJobStatus): void {
    const job = this.trainingJobs.get(name);
    if (job) job.status = status;
  }

  private count(name: string): void {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }

  /** Maybe throws an injected fault before the call; returns whether to time out after accepting it. */
  private maybeFault(service: 'batch' | 'sagemaker', action: string, accepts: boolean): boolean {
    if (service === 'batch' && this.refuse?.action === action) {
      throw new ClientException({
        message: this.refuse.message,
        $metadata: { httpStatusCode: 400, requestId: 'refused' },
      });
    }
    if (this.nextTimeout?.action === action) {
      const { afterAccept } = this.nextTimeout;
      this.nextTimeout = undefined;
      if (afterAccept) return true;
      throw sdkError(service, 'timeout', action);
    }
    if (!this.faults || this.faults.random() >= this.faults.rate) return false;
    const kinds: FaultKind[] = ['throttling', 'server', 'timeout'];
    const kind = kinds[this.faultTurn++ % kinds.length] as FaultKind;
    if (kind === 'timeout' && accepts && this.faults.random() < 0.5) {
      this.injected.timeoutAfterAccept += 1;
      return true;
    }
    this.injected[kind] += 1;
    throw sdkError(service, kind, action);
  }

  private wire(): void {
    const batch = <I, O>(
      command: new (...args: never[]) => object,
      action: string,
      fn: (input: I) => O,
      accepts = false,
    ) =>
      // biome-ignore lint/suspicious/noExplicitAny: aws-sdk-client-mock's command typing is per client.
      this.batch.on(command as any).callsFake((input: I) => {
        this.count(`Batch.${action}`);
        const timeoutAfter = this.maybeFault('batch', action, accepts);
        const output = fn(input);
        if (this.hangNext === action) {
          this.hangNext = undefined;
          return new Promise<never>(() => {});
        }
        if (timeoutAfter) throw sdkError('batch', 'timeout', `${action} (after accept)`);
        return output;
      });
    batch(
      RegisterJobDefinitionCommand,
      'RegisterJobDefinition',
      (input: RegisterJobDefinitionCommandInput) => {
        this.definitions.set(input.jobDefinitionName ?? '', input);
        return {
          jobDefinitionName: input.jobDefinitionName,
          jobDefinitionArn: `arn:aws:batch:us-east-1:123456789012:job-definition/${input.jobDefinitionName}:1`,
          revision: 1,
        };
      },
    );
    // Registered definitions stay ACTIVE (revision 1), so a shared definition is found on its next use.
    batch(
      DescribeJobDefinitionsCommand,
      'DescribeJobDefinitions',
      (input: { jobDefinitionName?: string }) => {
        const found = this.definitions.get(input.jobDefinitionName ?? '');
        return {
          jobDefinitions: found
            ? [
                {
                  jobDefinitionName: found.jobDefinitionName,
                  jobDefinitionArn: `arn:aws:batch:us-east-1:123456789012:job-definition/${found.jobDefinitionName}:1`,
                  revision: 1,
                  status: 'ACTIVE',
                  type: found.type,
                },
              ]
            : [],
        };
      },
    );
    batch(DeregisterJobDefinitionCommand, 'DeregisterJobDefinition', () => ({}));
    batch(
      SubmitJobCommand,
      'SubmitJob',
      (input: { jobName?: string; jobQueue?: string; jobDefinition?: string }) => {
        this.counter += 1;
        const jobId = `00000000-0000-4000-8000-${String(this.counter).padStart(12, '0')}`;
        const name = (input.jobDefinition ?? '').replace(/^.*job-definition\//, '').replace(/:\d+$/, '');
        this.batchJobs.set(jobId, {
          jobId,
          jobName: input.jobName ?? '',
          jobQueue: input.jobQueue ?? '',
          status: 'SUBMITTED',
          createdAt: Date.now(),
          definition: this.definitions.get(name) ?? { jobDefinitionName: name, type: 'multinode' },
        });
        return { jobArn: `arn:aws:batch:us-east-1:123456789012:job/${jobId}`, jobName: input.jobName, jobId };
      },
      true,
    );
    batch(ListJobsCommand, 'ListJobs', (input: { jobQueue?: string; filters?: { values?: string[] }[] }) => {
      const name = input.filters?.[0]?.values?.[0];
      const jobs = [...this.batchJobs.values()].filter(
        (j) => j.jobQueue === input.jobQueue && (name === undefined || j.jobName === name),
      );
      return {
        jobSummaryList: jobs.map((j) => ({
          jobId: j.jobId,
          jobName: j.jobName,
          status: j.status,
          createdAt: j.createdAt,
        })),
      };
    });
    batch(DescribeJobsCommand, 'DescribeJobs', (input: { jobs?: string[] }) => ({
      jobs: (input.jobs ?? []).flatMap((id) => {
        const [parentId = id, node] = id.split('#');
        const job = this.batchJobs.get(parentId);
        if (!job) return [];
        if (node !== undefined) {
          const logStreamName = `${job.jobName}/default/${id.replace('#', '-')}`;
          const nodeJob: JobDetail = {
            jobArn: `arn:aws:batch:us-east-1:123456789012:job/${id}`,
            jobId: id,
            jobName: job.jobName,
            jobQueue: job.jobQueue,
            status: job.status,
            createdAt: job.createdAt,
            startedAt: job.createdAt,
            jobDefinition: `arn:aws:batch:us-east-1:123456789012:job-definition/${job.definition.jobDefinitionName}:1`,
            nodeDetails: { nodeIndex: Number(node), isMainNode: node === '0' },
            container: { logStreamName },
            attempts: [],
          };
          return [nodeJob];
        }
        const detail: JobDetail = {
          jobArn: `arn:aws:batch:us-east-1:123456789012:job/${job.jobId}`,
          jobId: job.jobId,
          jobName: job.jobName,
          jobQueue: job.jobQueue,
          status: job.status,
          attempts: [],
          createdAt: job.createdAt,
          startedAt: job.createdAt,
          jobDefinition: `arn:aws:batch:us-east-1:123456789012:job-definition/${job.definition.jobDefinitionName}:1`,
          parameters: {},
          tags: job.definition.tags ?? {},
          nodeProperties: {
            numNodes: job.definition.nodeProperties?.numNodes ?? 1,
            mainNode: 0,
            nodeRangeProperties: job.definition.nodeProperties?.nodeRangeProperties ?? [],
          },
        };
        if (job.status === 'FAILED') detail.statusReason = 'Essential container in task exited';
        return [detail];
      }),
    }));
    batch(TerminateJobCommand, 'TerminateJob', () => ({}));
    batch(CancelJobCommand, 'CancelJob', () => ({}));

    const sagemaker = <I, O>(
      command: new (...args: never[]) => object,
      action: string,
      fn: (input: I) => O,
      accepts = false,
    ) =>
      // biome-ignore lint/suspicious/noExplicitAny: aws-sdk-client-mock's command typing is per client.
      this.sagemaker.on(command as any).callsFake((input: I) => {
        this.count(`SageMaker.${action}`);
        const timeoutAfter = this.maybeFault('sagemaker', action, accepts);
        const output = fn(input);
        if (timeoutAfter) throw sdkError('sagemaker', 'timeout', `${action} (after accept)`);
        return output;
      });
    sagemaker(
      CreateTrainingJobCommand,
      'CreateTrainingJob',
      (input: CreateTrainingJobCommandInput) => {
        const name = input.TrainingJobName ?? '';
        this.trainingJobs.set(name, { name, status: 'InProgress', input, createdAt: Date.now() });
        return { TrainingJobArn: `arn:aws:sagemaker:us-east-1:123456789012:training-job/${name}` };
      },
      true,
    );
    sagemaker(DescribeTrainingJobCommand, 'DescribeTrainingJob', (input: { TrainingJobName?: string }) => {
      const job = this.trainingJobs.get(input.TrainingJobName ?? '');
      if (!job) {
        throw new SageMakerServiceException({
          name: 'ValidationException',
          message: 'Requested resource not found.',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        });
      }
      return {
        TrainingJobName: job.name,
        TrainingJobArn: `arn:aws:sagemaker:us-east-1:123456789012:training-job/${job.name}`,
        TrainingJobStatus: job.status,
        SecondaryStatus: job.status === 'InProgress' ? 'Training' : job.status,
        AlgorithmSpecification: job.input.AlgorithmSpecification,
        RoleArn: job.input.RoleArn,
        OutputDataConfig: job.input.OutputDataConfig,
        ResourceConfig: job.input.ResourceConfig,
        StoppingCondition: job.input.StoppingCondition,
        Environment: job.input.Environment,
        CreationTime: new Date(job.createdAt),
        LastModifiedTime: new Date(),
      };
    });
    sagemaker(ListTagsCommand, 'ListTags', (input: { ResourceArn?: string }) => ({
      Tags:
        this.trainingJobs.get(input.ResourceArn?.replace(/^.*training-job\//, '') ?? '')?.input.Tags ?? [],
    }));
    sagemaker(StopTrainingJobCommand, 'StopTrainingJob', () => ({}));

    // biome-ignore lint/suspicious/noExplicitAny: aws-sdk-client-mock's command typing is per client.
    this.logs.on(GetLogEventsCommand as any).callsFake(() => {
      this.count('CloudWatchLogs.GetLogEvents');
      return {
        events: [{ timestamp: Date.now(), message: 'hello from the fake log' }],
        nextForwardToken: 'f/1',
      };
    });
  }
}
