/**
 * Least privilege, as data: what each function calls ({@link FUNCTION_ACCESS}), and how that becomes IAM
 * statements on the narrowest resources AWS allows ({@link grantAccess}). Every wildcard that remains is
 * acknowledged for cdk-nag right where it is granted, with the reason AWS needs it.
 *
 * @module
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { WORKSPACE_KEY_PREFIX } from '../../functions/shared/env-names.js';
import { TABLE_INDEXES } from '../../lib/store/table.js';
import type { WorkspaceArchiveBucket } from './workspace-bucket.js';

/** DynamoDB item actions a function may call. */
export type TableAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem';

/** What a function may do with AWS Batch. */
export type BatchAccess =
  /** Find and read jobs: ListJobs, DescribeJobs. */
  | 'describe'
  /** Launch jobs: DescribeJobDefinitions, RegisterJobDefinition, SubmitJob, TagResource, iam:PassRole. */
  | 'submit'
  /** Stop jobs: CancelJob, TerminateJob. */
  | 'stop'
  /** Remove job definitions: DeregisterJobDefinition. */
  | 'deregister';

/** What a function may do with SageMaker training jobs. */
export type SageMakerAccess =
  /** DescribeTrainingJob. */
  | 'describe'
  /** CreateTrainingJob, AddTags, iam:PassRole. */
  | 'submit'
  /** StopTrainingJob. */
  | 'stop';

/** Everything one function may call. Absent means nothing. */
export interface FunctionAccess {
  /** Item actions on the app table (records and idempotency reservations). */
  readonly tableItems?: readonly TableAction[];
  /** Index (or indexes) the function queries. */
  readonly queryIndex?: keyof typeof TABLE_INDEXES | readonly (keyof typeof TABLE_INDEXES)[];
  /** Publishes normalized `AppState Change` events on the stack's bus. */
  readonly publishEvents?: boolean;
  readonly batch?: readonly BatchAccess[];
  readonly sageMaker?: readonly SageMakerAccess[];
  /** Reads job logs (GetLogEvents, DescribeLogStreams) from the configured log groups. */
  readonly readJobLogs?: boolean;
  /**
   * Workspace archives: `read` finds them (HeadObject: s3:GetObject, and s3:ListBucket so that a missing
   * archive is a 404, not a 403); `upload` also signs upload URLs (s3:PutObject, which the URL's PUT is
   * authorized as).
   */
  readonly workspaces?: 'read' | 'upload';
}

/**
 * What each function calls, keyed by the function names of `functions/routes.ts`. Derived from the handlers'
 * calls: the runner's store operations (lib/store) and the schedulers' SDK calls (lib/schedulers/aws-batch,
 * aws-sagemaker). Only the outbox publisher puts events: the functions that apply transitions write the
 * record, and the table's stream carries the committed change to the publisher.
 */
export const FUNCTION_ACCESS: Readonly<Record<string, FunctionAccess>> = {
  Schedulers: {},
  Components: {},
  // Whether the caller's workspace is uploaded yet, to show where the job fetches it.
  Dryrun: { workspaces: 'read' },
  Workspaces: { workspaces: 'upload' },
  Run: {
    // create record (PutItem), idempotency reserve/complete/release (PutItem/UpdateItem/DeleteItem),
    // SUBMITTED transition (GetItem + UpdateItem).
    tableItems: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    batch: ['submit'],
    // DescribeTrainingJob: when CreateTrainingJob says the name is taken, to recognise our own earlier attempt.
    sageMaker: ['submit', 'describe'],
    // The run's workspace must be in the bucket (HeadObject) before anything is recorded.
    workspaces: 'read',
  },
  // byCreated: deployment admins' `?owner=all`.
  List: { queryIndex: ['byOwner', 'byCreated'] },
  // The same Query as List, projecting the state.
  Counts: { queryIndex: ['byOwner', 'byCreated'] },
  Status: {
    tableItems: ['GetItem', 'UpdateItem'],
    batch: ['describe'],
    sageMaker: ['describe'],
  },
  Delete: {
    tableItems: ['GetItem', 'UpdateItem'],
    batch: ['describe', 'stop', 'deregister'],
    sageMaker: ['describe', 'stop'],
  },
  Cancel: {
    tableItems: ['GetItem', 'UpdateItem'],
    batch: ['describe', 'stop'],
    sageMaker: ['describe', 'stop'],
  },
  Logs: {
    tableItems: ['GetItem'],
    batch: ['describe'],
    sageMaker: ['describe'],
    readJobLogs: true,
  },
  StateChange: {
    tableItems: ['GetItem', 'UpdateItem'],
    // byActive: a "Batch Job Queue Blocked" event gives its reason to the apps waiting in that queue.
    queryIndex: ['byNativeName', 'byActive'],
  },
  // Reads the table's stream (granted with the event source) and puts the committed changes on the bus.
  Publisher: { publishEvents: true },
  Reconciler: {
    tableItems: ['GetItem', 'UpdateItem'],
    queryIndex: 'byActive',
    batch: ['describe'],
    sageMaker: ['describe'],
  },
};

/** The resources permissions point at. */
export interface AccessTargets {
  readonly table: ITable;
  readonly eventBus: IEventBus;
  /** Batch access; undefined when the `aws_batch` scheduler is not enabled (nothing is granted). */
  readonly batch?: {
    /** Queue ARNs jobs may be submitted to (the construct requires at least one with aws_batch). */
    readonly jobQueueArns: readonly string[];
    /** Job and execution roles job definitions may name (iam:PassRole). */
    readonly jobRoleArns: readonly string[];
    /**
     * How every job definition the stack registers is named (`batchNamePrefix` of the stack name):
     * RegisterJobDefinition, SubmitJob and TagResource act only on `job-definition/<namePrefix>*`.
     */
    readonly namePrefix: string;
  };
  /** SageMaker access; undefined when the `aws_sagemaker` scheduler is not enabled. */
  readonly sageMaker?: {
    /** Execution roles training jobs may run as (iam:PassRole). */
    readonly executionRoleArns: readonly string[];
  };
  /** CloudWatch Logs log groups the Logs function may read. */
  readonly logGroupNames: readonly string[];
  /**
   * The tag every job, job definition and training job the stack launches carries: launches must carry it
   * (`aws:RequestTag`), and stop, cancel and deregister act only on resources that have it
   * (`aws:ResourceTag`). Undefined: no tag conditions.
   */
  readonly stackTag?: { readonly key: string; readonly value: string };
  /**
   * Privileged Batch containers allowed (else RegisterJobDefinition requires `batch:Privileged` and
   * `batch:EKSPrivileged` false, see {@link NOT_PRIVILEGED}).
   */
  readonly privilegedAllowed?: boolean;
  /** SageMaker instance types CreateTrainingJob may use (`sagemaker:InstanceTypes`); any when undefined. */
  readonly sageMakerInstanceTypes?: readonly string[];
  /** The workspace bucket; undefined when the stack has none (nothing is granted). */
  readonly workspaceBucket?: WorkspaceArchiveBucket;
}

/**
 * RegisterJobDefinition's conditions unless privileged containers are allowed. AWS Batch evaluates its
 * condition keys on each container of a definition, multi-node ranges included (Batch user guide, "Deny
 * action when all conditions match strings"): `batch:Privileged` is a container's `privileged`,
 * `batch:EKSPrivileged` an EKS container's `securityContext.privileged`. IfExists, because a container of the
 * other kind has no such key. An EKS definition is refused in any case (`batch:EKSImage` must be absent):
 * the stack registers multi-node ECS definitions only.
 */
export const NOT_PRIVILEGED = {
  BoolIfExists: { 'batch:Privileged': 'false', 'batch:EKSPrivileged': 'false' },
} as const;

/** Refuses EKS job definitions: every EKS container carries an image, so `batch:EKSImage` exists for it. */
export const NO_EKS = { Null: { 'batch:EKSImage': 'true' } } as const;

/** IAM conditions for the stack tag: on what a call creates, and on what it acts on. */
function tagConditions(stackTag: AccessTargets['stackTag']) {
  if (stackTag === undefined) return { request: undefined, resource: undefined };
  return {
    request: { StringEquals: { [`aws:RequestTag/${stackTag.key}`]: stackTag.value } },
    resource: { StringEquals: { [`aws:ResourceTag/${stackTag.key}`]: stackTag.value } },
  };
}

/**
 * The id cdk-nag prints for a wildcard resource finding, with CloudFormation pseudo parameters written
 * `<AWS::Region>` as cdk-nag flattens them.
 */
export function wildcardResourceFinding(resource: string): string {
  return `AwsSolutions-IAM5[Resource::${resource}]`;
}

const NAG_ARN = (service: string, resource: string, sep = ':') =>
  `arn:<AWS::Partition>:${service}:<AWS::Region>:<AWS::AccountId>${sep}${resource}`;

/**
 * Adds the statements `access` calls for to `role`, and acknowledges each wildcard that AWS requires on it.
 */
export function grantAccess(role: IRole, access: FunctionAccess, targets: AccessTargets): void {
  const stack = Stack.of(role);
  const arn = (service: string, resource: string) =>
    stack.formatArn({ service, resource, resourceName: '*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME });
  const add = (statement: PolicyStatement) => role.addToPrincipalPolicy(statement);
  const acknowledge = (resource: string, reason: string) =>
    Validations.of(role).acknowledge({ id: wildcardResourceFinding(resource), reason });

  // ---- DynamoDB: item actions on the table, queries on exactly one index.
  if (access.tableItems !== undefined && access.tableItems.length > 0) {
    add(
      new PolicyStatement({
        actions: access.tableItems.map((action) => `dynamodb:${action}`),
        resources: [targets.table.tableArn],
      }),
    );
  }
  if (access.queryIndex !== undefined) {
    const indexes = typeof access.queryIndex === 'string' ? [access.queryIndex] : access.queryIndex;
    add(
      new PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: indexes.map((index) => `${targets.table.tableArn}/index/${TABLE_INDEXES[index]}`),
      }),
    );
  }
  const tags = tagConditions(targets.stackTag);

  // ---- EventBridge: publish on the stack's own bus only.
  if (access.publishEvents === true) {
    add(new PolicyStatement({ actions: ['events:PutEvents'], resources: [targets.eventBus.eventBusArn] }));
  }

  // ---- AWS Batch.
  const batch = targets.batch;
  const batchAccess = new Set(batch === undefined ? [] : (access.batch ?? []));
  if (batch !== undefined && batchAccess.size > 0) {
    const jobs = arn('batch', 'job');
    const definitions = arn('batch', 'job-definition');
    const readActions: string[] = [];
    if (batchAccess.has('describe')) readActions.push('batch:ListJobs', 'batch:DescribeJobs');
    if (batchAccess.has('submit')) readActions.push('batch:DescribeJobDefinitions');
    if (readActions.length > 0) {
      // AWS requires "*": ListJobs, DescribeJobs and DescribeJobDefinitions support no resource-level
      // permissions (Service Authorization Reference, AWS Batch).
      add(new PolicyStatement({ actions: readActions, resources: ['*'] }));
      acknowledge(
        '*',
        'AWS Batch ListJobs, DescribeJobs and DescribeJobDefinitions support no resource-level permissions (read-only); X-Ray PutTraceSegments/PutTelemetryRecords neither.',
      );
    }
    if (batchAccess.has('submit')) {
      // Only the stack's own job definitions: their names start with the stack's prefix (the translator's
      // namePrefix), so a definition registered by anyone else cannot be submitted through this role.
      const ownDefinitions = stack.formatArn({
        service: 'batch',
        resource: 'job-definition',
        resourceName: `${batch.namePrefix}*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      });
      add(
        new PolicyStatement({
          actions: ['batch:RegisterJobDefinition'],
          resources: [ownDefinitions],
          conditions: {
            ...(tags.request ?? {}),
            ...NO_EKS,
            ...(targets.privilegedAllowed === true ? {} : NOT_PRIVILEGED),
          },
        }),
      );
      // SubmitJob is authorized on the job queue, the job definition and the new job (Service
      // Authorization Reference): each must match, so a foreign definition or queue is refused.
      add(
        new PolicyStatement({
          actions: ['batch:SubmitJob'],
          resources: [ownDefinitions, ...batch.jobQueueArns, jobs],
          ...(tags.request ? { conditions: tags.request } : {}),
        }),
      );
      // Tags on RegisterJobDefinition and SubmitJob are authorized as batch:TagResource on the new resource.
      add(
        new PolicyStatement({
          actions: ['batch:TagResource'],
          resources: [ownDefinitions, jobs],
          ...(tags.request ? { conditions: tags.request } : {}),
        }),
      );
      acknowledge(
        NAG_ARN('batch', `job-definition/${batch.namePrefix}*`),
        "Job definitions are named after each app at run time (TorchX naming) behind the stack's name prefix; scoped to that prefix in this account and Region.",
      );
      acknowledge(
        NAG_ARN('batch', 'job/*'),
        'Batch job ids are assigned by AWS at submission; submitting and tagging are authorized on the new job ARN. Scoped to this account and Region.',
      );
      if (batch.jobRoleArns.length > 0) {
        add(
          new PolicyStatement({
            actions: ['iam:PassRole'],
            resources: [...batch.jobRoleArns],
            conditions: { StringEquals: { 'iam:PassedToService': 'batch.amazonaws.com' } },
          }),
        );
      }
    }
    if (batchAccess.has('stop')) {
      add(
        new PolicyStatement({
          actions: ['batch:CancelJob', 'batch:TerminateJob'],
          resources: [jobs],
          ...(tags.resource ? { conditions: tags.resource } : {}),
        }),
      );
      acknowledge(
        NAG_ARN('batch', 'job/*'),
        'Batch job ids are assigned by AWS at submission and are not known at deploy time; scoped to this account and Region.',
      );
    }
    if (batchAccess.has('deregister')) {
      add(
        new PolicyStatement({
          actions: ['batch:DeregisterJobDefinition'],
          resources: [definitions],
          ...(tags.resource ? { conditions: tags.resource } : {}),
        }),
      );
      acknowledge(
        NAG_ARN('batch', 'job-definition/*'),
        'Deregisters only definitions with the stack tag, those registered before the name prefix too; named after each app at run time (TorchX naming); scoped to this account and Region.',
      );
    }
  }

  // ---- SageMaker training jobs.
  const sageMaker = targets.sageMaker;
  const sageMakerAccess = new Set(sageMaker === undefined ? [] : (access.sageMaker ?? []));
  if (sageMaker !== undefined && sageMakerAccess.size > 0) {
    const trainingJobs = arn('sagemaker', 'training-job');
    const statement = (actions: string[], conditions?: Record<string, Record<string, unknown>>) =>
      add(
        new PolicyStatement({
          actions,
          resources: [trainingJobs],
          ...(conditions && Object.keys(conditions).length > 0 ? { conditions } : {}),
        }),
      );
    // Read-only and unscoped by tag, so records of jobs launched before the stack tag still refresh.
    if (sageMakerAccess.has('describe')) statement(['sagemaker:DescribeTrainingJob']);
    if (sageMakerAccess.has('submit')) {
      const instanceTypes = targets.sageMakerInstanceTypes;
      statement(['sagemaker:CreateTrainingJob'], {
        ...(tags.request ?? {}),
        ...(instanceTypes === undefined
          ? {}
          : { 'ForAllValues:StringEquals': { 'sagemaker:InstanceTypes': [...instanceTypes] } }),
      });
      // CreateTrainingJob with Tags is authorized as sagemaker:AddTags on the new job too.
      statement(['sagemaker:AddTags'], tags.request);
    }
    if (sageMakerAccess.has('stop')) statement(['sagemaker:StopTrainingJob'], tags.resource);
    acknowledge(
      NAG_ARN('sagemaker', 'training-job/*'),
      'Training jobs are named after each app at run time (TorchX naming), so the name is not known at deploy time; scoped to this account and Region.',
    );
    if (sageMakerAccess.has('submit') && sageMaker.executionRoleArns.length > 0) {
      add(
        new PolicyStatement({
          actions: ['iam:PassRole'],
          resources: [...sageMaker.executionRoleArns],
          conditions: { StringEquals: { 'iam:PassedToService': 'sagemaker.amazonaws.com' } },
        }),
      );
    }
  }

  // ---- S3: workspace archives, under their prefix only.
  const bucket = targets.workspaceBucket;
  if (bucket !== undefined && access.workspaces !== undefined) {
    const upload = access.workspaces === 'upload';
    add(
      new PolicyStatement({
        actions: upload ? ['s3:GetObject', 's3:PutObject'] : ['s3:GetObject'],
        resources: [bucket.archivesArn()],
      }),
    );
    // Without it S3 answers 403 instead of 404 for an archive not uploaded yet. Keys name no one (owners'
    // prefixes are hashes) and the bucket holds nothing but archives.
    add(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
    Validations.of(role).acknowledge({
      id: wildcardResourceFinding(`<${bucket.logicalIdForNag()}.Arn>/${WORKSPACE_KEY_PREFIX}*`),
      reason:
        "Workspace archives are named by their owner's prefix and their SHA-256 at upload time; scoped to the workspace bucket's archive prefix.",
    });
  }

  // ---- CloudWatch Logs: the configured job log groups, read-only.
  if (access.readJobLogs === true && targets.logGroupNames.length > 0) {
    add(
      new PolicyStatement({
        actions: ['logs:GetLogEvents', 'logs:DescribeLogStreams'],
        resources: targets.logGroupNames.map((name) => logGroupStreamsArn(stack, name)),
      }),
    );
    for (const name of targets.logGroupNames) {
      acknowledge(
        NAG_ARN('logs', `log-group:${name}:*`),
        `Job log streams in ${name} are created per job and node at run time; read-only, one log group.`,
      );
    }
  }
}

/** `arn:…:log-group:<name>:*`: the log group and every stream in it. */
export function logGroupStreamsArn(stack: Stack, logGroupName: string): string {
  return stack.formatArn({
    service: 'logs',
    resource: 'log-group',
    resourceName: `${logGroupName}:*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}
