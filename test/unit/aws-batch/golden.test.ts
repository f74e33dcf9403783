/**
 * Golden requests: for each AppDef (every builtin component and hand-built apps that cover each mapping rule),
 * the complete `{registerJobDefinition, submitJob}` written out by hand from TorchX's rules
 * (reference: torchx-aws.md §1.2-1.4, §3, §4) and compared with toEqual.
 *
 * Shared (content-addressed) job definitions are named `<app>-<hash>`; their expected name is the hash of the
 * hand-written definition ({@link shared}).
 */
import type { DeviceCgroupPermission, EvaluateOnExit } from '@aws-sdk/client-batch';
import { describe, expect, it } from 'vitest';
import { materializeComponent } from '../../../lib/components/index.js';
import { type AwsBatchRequest, definitionHash } from '../../../lib/schedulers/aws-batch/index.js';
import {
  type AppDef,
  type Cfg,
  makeAppDef,
  makeResource,
  makeRole,
  namedResource,
  ValidationError,
} from '../../../lib/specs/index.js';
import { mockedScheduler } from './helpers.js';

const IMAGE = 'ghcr.io/pytorch/torchx:0.7.0';
const RWM: DeviceCgroupPermission[] = ['READ', 'WRITE', 'MKNOD'];
const EXIT_ON_ZERO: EvaluateOnExit = { onExitCode: '0', action: 'EXIT' };

function torchxTags(appName: string, user = 'alice'): Record<string, string> {
  return {
    'torchx.pytorch.org/version': '0.8.0dev0',
    'torchx.pytorch.org/app-name': appName,
    'torchx.pytorch.org/user': user,
  };
}

/** Names a hand-written shared definition `<prefix>-<hash of its content>` (name placeholders are ignored). */
function shared(prefix: string, request: AwsBatchRequest): AwsBatchRequest {
  const name = `${prefix}-${definitionHash(request.registerJobDefinition)}`;
  return {
    registerJobDefinition: { ...request.registerJobDefinition, jobDefinitionName: name },
    submitJob: { ...request.submitJob, jobDefinition: name },
  };
}

interface GoldenCase {
  title: string;
  app: () => AppDef;
  cfg?: Cfg;
  expected: AwsBatchRequest;
}

const ddpCommand = (rest: string) =>
  `torchrun --rdzv_backend c10d --rdzv_endpoint \${AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS:=localhost}:29500 ${rest}`;

const echoDefinition = shared('echo', {
  registerJobDefinition: {
    jobDefinitionName: 'HASHED',
    type: 'multinode',
    nodeProperties: {
      numNodes: 1,
      mainNode: 0,
      nodeRangeProperties: [
        {
          targetNodes: '0:0',
          container: {
            command: ['echo', 'hello world'],
            image: IMAGE,
            environment: [
              { name: 'TORCHX_ROLE_IDX', value: '0' },
              { name: 'TORCHX_ROLE_NAME', value: 'echo' },
            ],
            privileged: false,
            resourceRequirements: [
              { type: 'VCPU', value: '1' },
              { type: 'MEMORY', value: '1024' },
            ],
            linuxParameters: { sharedMemorySize: 1024, devices: [] },
            logConfiguration: { logDriver: 'awslogs' },
            mountPoints: [],
            volumes: [],
          },
        },
      ],
    },
    retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
    tags: torchxTags('echo'),
  },
  submitJob: {
    jobName: 'echo-t4rcs9x6sv1m',
    jobQueue: 'gpu',
    jobDefinition: 'HASHED',
    tags: torchxTags('echo'),
  },
});

const cases: GoldenCase[] = [
  {
    title: 'dist.ddp -j 2x8 --script main.py -- --epochs 10',
    app: () => materializeComponent('dist.ddp', ['-j', '2x8', '--script', 'main.py', '--', '--epochs', '10']),
    expected: {
      registerJobDefinition: {
        jobDefinitionName: 'main-t4rcs9x6sv1m',
        type: 'multinode',
        nodeProperties: {
          numNodes: 2,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:1',
              container: {
                command: [
                  'bash',
                  '-c',
                  ddpCommand(
                    "--rdzv_id 'main-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 8 --tee 3 --role '' main.py --epochs 10",
                  ),
                ],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_TRACKING_EXPERIMENT_NAME', value: 'default-experiment' },
                  { name: 'TORCHX_TRACKING_RUN_NAME', value: 'main' },
                  { name: 'LOGLEVEL', value: 'WARNING' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'main' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '2' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('main'),
      },
      submitJob: {
        jobName: 'main-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'main-t4rcs9x6sv1m',
        tags: torchxTags('main'),
      },
    },
  },
  {
    title: 'dist.ddp -j 2:4x8 --script main.py (elastic range: the maximum node count, 0:3)',
    app: () => materializeComponent('dist.ddp', ['-j', '2:4x8', '--script', 'main.py']),
    expected: {
      registerJobDefinition: {
        jobDefinitionName: 'main-t4rcs9x6sv1m',
        type: 'multinode',
        nodeProperties: {
          numNodes: 4,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:3',
              container: {
                command: [
                  'bash',
                  '-c',
                  ddpCommand(
                    "--rdzv_id 'main-t4rcs9x6sv1m' --nnodes 2:4 --nproc_per_node 8 --tee 3 --role '' main.py",
                  ),
                ],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_TRACKING_EXPERIMENT_NAME', value: 'default-experiment' },
                  { name: 'TORCHX_TRACKING_RUN_NAME', value: 'main' },
                  { name: 'LOGLEVEL', value: 'WARNING' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'main' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '2' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('main'),
      },
      submitJob: {
        jobName: 'main-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'main-t4rcs9x6sv1m',
        tags: torchxTags('main'),
      },
    },
  },
  {
    title: 'dist.ddp -m pkg.train --name exp/run.v1 (single node, sanitised job name)',
    app: () => materializeComponent('dist.ddp', ['-m', 'pkg.train', '--name', 'exp/run.v1']),
    expected: {
      registerJobDefinition: {
        jobDefinitionName: 'run-v1-t4rcs9x6sv1m',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: [
                  'bash',
                  '-c',
                  "torchrun --rdzv_backend c10d --rdzv_endpoint localhost:0 --rdzv_id 'run-v1-t4rcs9x6sv1m' " +
                    "--nnodes 1 --nproc_per_node 2 --tee 3 --role '' -m pkg.train",
                ],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_TRACKING_EXPERIMENT_NAME', value: 'exp' },
                  { name: 'TORCHX_TRACKING_RUN_NAME', value: 'run.v1' },
                  { name: 'LOGLEVEL', value: 'WARNING' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'train' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '2' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('run.v1'),
      },
      submitJob: {
        jobName: 'run-v1-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'run-v1-t4rcs9x6sv1m',
        tags: torchxTags('run.v1'),
      },
    },
  },
  {
    title: 'dist.ddp on aws_p4d.24xlarge with mounts, retries, a share, roles and privileged',
    app: () =>
      materializeComponent('dist.ddp', [
        '-j',
        '2x8',
        '-h',
        'aws_p4d.24xlarge',
        '--script',
        'main.py',
        '--max_retries',
        '3',
        '--mounts',
        'type=bind,src=/data,dst=/data,readonly,type=volume,src=fs-123,dst=/efs,type=device,src=/dev/fuse',
      ]),
    cfg: {
      share_id: 'vision',
      priority: 10,
      privileged: true,
      job_role_arn: 'arn:aws:iam::123456789012:role/job',
      execution_role_arn: 'arn:aws:iam::123456789012:role/exec',
    },
    expected: {
      registerJobDefinition: {
        jobDefinitionName: 'main-vision-t4rcs9x6sv1m',
        type: 'multinode',
        nodeProperties: {
          numNodes: 2,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:1',
              container: {
                command: [
                  'bash',
                  '-c',
                  ddpCommand(
                    "--rdzv_id 'main-vision-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 8 --tee 3 --role '' main.py",
                  ),
                ],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_TRACKING_EXPERIMENT_NAME', value: 'default-experiment' },
                  { name: 'TORCHX_TRACKING_RUN_NAME', value: 'main' },
                  { name: 'LOGLEVEL', value: 'WARNING' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'main' },
                ],
                privileged: true,
                resourceRequirements: [
                  { type: 'VCPU', value: '96' },
                  { type: 'MEMORY', value: '1132416' },
                  { type: 'GPU', value: '8' },
                ],
                linuxParameters: {
                  sharedMemorySize: 1132416,
                  devices: [
                    { hostPath: '/dev/fuse', containerPath: '/dev/fuse', permissions: RWM },
                    {
                      hostPath: '/dev/infiniband/uverbs0',
                      containerPath: '/dev/infiniband/uverbs0',
                      permissions: RWM,
                    },
                    {
                      hostPath: '/dev/infiniband/uverbs1',
                      containerPath: '/dev/infiniband/uverbs1',
                      permissions: RWM,
                    },
                    {
                      hostPath: '/dev/infiniband/uverbs2',
                      containerPath: '/dev/infiniband/uverbs2',
                      permissions: RWM,
                    },
                    {
                      hostPath: '/dev/infiniband/uverbs3',
                      containerPath: '/dev/infiniband/uverbs3',
                      permissions: RWM,
                    },
                  ],
                },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [
                  { containerPath: '/data', readOnly: true, sourceVolume: 'mount_0' },
                  { containerPath: '/efs', readOnly: false, sourceVolume: 'mount_1' },
                ],
                volumes: [
                  { name: 'mount_0', host: { sourcePath: '/data' } },
                  { name: 'mount_1', efsVolumeConfiguration: { fileSystemId: 'fs-123' } },
                ],
                jobRoleArn: 'arn:aws:iam::123456789012:role/job',
                executionRoleArn: 'arn:aws:iam::123456789012:role/exec',
                instanceType: 'p4d.24xlarge',
              },
            },
          ],
        },
        retryStrategy: { attempts: 3, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('main'),
        schedulingPriority: 10,
      },
      submitJob: {
        jobName: 'main-vision-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'main-vision-t4rcs9x6sv1m',
        tags: torchxTags('main'),
        shareIdentifier: 'vision',
      },
    },
  },
  {
    title: 'dist.spmd -j 2x1 --script train.py (gpu.small)',
    app: () => materializeComponent('dist.spmd', ['-j', '2x1', '--script', 'train.py']),
    expected: {
      registerJobDefinition: {
        jobDefinitionName: 'train-t4rcs9x6sv1m',
        type: 'multinode',
        nodeProperties: {
          numNodes: 2,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:1',
              container: {
                command: [
                  'bash',
                  '-c',
                  ddpCommand(
                    "--rdzv_id 'train-t4rcs9x6sv1m' --nnodes 2 --nproc_per_node 1 --tee 3 --role '' train.py",
                  ),
                ],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_TRACKING_EXPERIMENT_NAME', value: 'default-experiment' },
                  { name: 'TORCHX_TRACKING_RUN_NAME', value: 'train' },
                  { name: 'LOGLEVEL', value: 'WARNING' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'train' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '8' },
                  { type: 'MEMORY', value: '32768' },
                  { type: 'GPU', value: '1' },
                ],
                linuxParameters: { sharedMemorySize: 32768, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('train'),
      },
      submitJob: {
        jobName: 'train-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'train-t4rcs9x6sv1m',
        tags: torchxTags('train'),
      },
    },
  },
  {
    title: 'utils.echo (a shared, content-addressed definition)',
    app: () => materializeComponent('utils.echo', []),
    expected: echoDefinition,
  },
  {
    title: "utils.sh echo 'hi there'",
    app: () => materializeComponent('utils.sh', ['echo', 'hi there']),
    expected: shared('sh', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['sh', '-c', "echo 'hi there'"],
                image: IMAGE,
                environment: [
                  { name: 'LOGLEVEL', value: 'WARNING' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'sh' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('sh'),
      },
      submitJob: {
        jobName: 'sh-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('sh'),
      },
    }),
  },
  {
    title: 'utils.python --script train.py -- --lr 0.1',
    app: () => materializeComponent('utils.python', ['--script', 'train.py', '--', '--lr', '0.1']),
    expected: shared('torchx_utils_python', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['python', 'train.py', '--lr', '0.1'],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'python' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('torchx_utils_python'),
      },
      submitJob: {
        jobName: 'torchx_utils_python-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('torchx_utils_python'),
      },
    }),
  },
  {
    title: 'utils.python -m pkg.main (HYDRA_MAIN_MODULE)',
    app: () => materializeComponent('utils.python', ['-m', 'pkg.main']),
    expected: shared('torchx_utils_python', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['python', '-m', 'pkg.main'],
                image: IMAGE,
                environment: [
                  { name: 'HYDRA_MAIN_MODULE', value: 'pkg.main' },
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'python' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('torchx_utils_python'),
      },
      submitJob: {
        jobName: 'torchx_utils_python-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('torchx_utils_python'),
      },
    }),
  },
  {
    title: 'utils.touch --file /tmp/x',
    app: () => materializeComponent('utils.touch', ['--file', '/tmp/x']),
    expected: shared('touch', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['touch', '/tmp/x'],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'touch' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('touch'),
      },
      submitJob: {
        jobName: 'touch-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('touch'),
      },
    }),
  },
  {
    title: 'utils.copy --src s3://a/b --dst /tmp/b',
    app: () => materializeComponent('utils.copy', ['--src', 's3://a/b', '--dst', '/tmp/b']),
    expected: shared('torchx-utils-copy', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: [
                  'python',
                  '-m',
                  'torchx.apps.utils.copy_main',
                  '--src',
                  's3://a/b',
                  '--dst',
                  '/tmp/b',
                ],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'torchx-utils-copy' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('torchx-utils-copy'),
      },
      submitJob: {
        jobName: 'torchx-utils-copy-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('torchx-utils-copy'),
      },
    }),
  },
  {
    title: 'three roles: node ranges, macros in args and env values, max retries across roles',
    app: () =>
      makeAppDef({
        name: 'multi',
        roles: [
          makeRole({
            name: 'ps',
            image: 'repo/ps:1',
            entrypoint: 'python',
            args: ['-m', 'ps', '--out', '${img_root}/ckpt'],
            resource: namedResource('cpu.small'),
          }),
          makeRole({
            name: 'trainer',
            image: 'repo/trainer:1',
            entrypoint: 'python',
            args: [
              'train.py',
              '--master',
              '$${${rank0_env}:=localhost}',
              '--rank',
              '${replica_id}',
              '--home',
              '$HOME',
            ],
            env: { RANK: '${replica_id}', UNKNOWN: '${unknown}' },
            numReplicas: 2,
            maxRetries: 2,
            resource: namedResource('gpu.medium'),
          }),
          makeRole({
            name: 'eval',
            image: 'repo/eval:1',
            entrypoint: 'python',
            args: ['eval.py'],
            maxRetries: 1,
            resource: makeResource({ cpu: 0, gpu: 0, memMB: 512 }),
          }),
        ],
      }),
    expected: shared('multi', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 4,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['python', '-m', 'ps', '--out', '/ckpt'],
                image: 'repo/ps:1',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'ps' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '2048' },
                ],
                linuxParameters: { sharedMemorySize: 2048, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
            {
              targetNodes: '1:2',
              container: {
                command: [
                  'python',
                  'train.py',
                  '--master',
                  '${AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS:=localhost}',
                  '--rank',
                  '$AWS_BATCH_JOB_NODE_INDEX',
                  '--home',
                  '$HOME',
                ],
                image: 'repo/trainer:1',
                environment: [
                  { name: 'RANK', value: '$AWS_BATCH_JOB_NODE_INDEX' },
                  { name: 'UNKNOWN', value: '${unknown}' },
                  { name: 'TORCHX_ROLE_IDX', value: '1' },
                  { name: 'TORCHX_ROLE_NAME', value: 'trainer' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '16' },
                  { type: 'MEMORY', value: '65536' },
                  { type: 'GPU', value: '2' },
                ],
                linuxParameters: { sharedMemorySize: 65536, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
            {
              targetNodes: '3:3',
              container: {
                command: ['python', 'eval.py'],
                image: 'repo/eval:1',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '2' },
                  { name: 'TORCHX_ROLE_NAME', value: 'eval' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '512' },
                ],
                linuxParameters: { sharedMemorySize: 512, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 2, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('multi'),
      },
      submitJob: {
        jobName: 'multi-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('multi'),
      },
    }),
  },
  {
    title: 'five roles, the most Batch allows',
    app: () =>
      makeAppDef({
        name: 'five',
        roles: ['a', 'b', 'c', 'd', 'e'].map((name) =>
          makeRole({
            name,
            image: 'img',
            entrypoint: name,
            resource: makeResource({ cpu: 1, gpu: 0, memMB: 100 }),
          }),
        ),
      }),
    expected: shared('five', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 5,
          mainNode: 0,
          nodeRangeProperties: ['a', 'b', 'c', 'd', 'e'].map((name, i) => ({
            targetNodes: `${i}:${i}`,
            container: {
              command: [name],
              image: 'img',
              environment: [
                { name: 'TORCHX_ROLE_IDX', value: String(i) },
                { name: 'TORCHX_ROLE_NAME', value: name },
              ],
              privileged: false,
              resourceRequirements: [
                { type: 'VCPU', value: '1' },
                { type: 'MEMORY', value: '100' },
              ],
              linuxParameters: { sharedMemorySize: 100, devices: [] },
              logConfiguration: { logDriver: 'awslogs' },
              mountPoints: [],
              volumes: [],
            },
          })),
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('five'),
      },
      submitJob: {
        jobName: 'five-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('five'),
      },
    }),
  },
  {
    title: 'Neuron and EFA named resources (aws_trn1.2xlarge, aws_g6e.24xlarge)',
    app: () =>
      makeAppDef({
        name: 'accel',
        roles: [
          makeRole({
            name: 'trn',
            image: 'img',
            entrypoint: 'run',
            resource: namedResource('aws_trn1.2xlarge'),
          }),
          makeRole({
            name: 'g6e',
            image: 'img',
            entrypoint: 'run',
            resource: namedResource('aws_g6e.24xlarge'),
          }),
        ],
      }),
    expected: shared('accel', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 2,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['run'],
                image: 'img',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'trn' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '8' },
                  { type: 'MEMORY', value: '31456' },
                ],
                linuxParameters: {
                  sharedMemorySize: 31456,
                  devices: [{ hostPath: '/dev/neuron0', containerPath: '/dev/neuron0', permissions: RWM }],
                },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
                instanceType: 'trn1.2xlarge',
              },
            },
            {
              targetNodes: '1:1',
              container: {
                command: ['run'],
                image: 'img',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '1' },
                  { name: 'TORCHX_ROLE_NAME', value: 'g6e' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '96' },
                  { type: 'MEMORY', value: '754944' },
                  { type: 'GPU', value: '4' },
                ],
                linuxParameters: {
                  sharedMemorySize: 754944,
                  devices: [
                    {
                      hostPath: '/dev/infiniband/uverbs0',
                      containerPath: '/dev/infiniband/uverbs0',
                      permissions: RWM,
                    },
                    {
                      hostPath: '/dev/infiniband/uverbs1',
                      containerPath: '/dev/infiniband/uverbs1',
                      permissions: RWM,
                    },
                  ],
                },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
                instanceType: 'g6e.24xlarge',
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('accel'),
      },
      submitJob: {
        jobName: 'accel-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('accel'),
      },
    }),
  },
  {
    title: 'cpu 0 and gpu -1: one vCPU, no GPU requirement',
    app: () =>
      makeAppDef({
        name: 'tiny',
        roles: [
          makeRole({
            name: 'tiny',
            image: 'img',
            entrypoint: 'true',
            resource: makeResource({ cpu: 0, gpu: -1, memMB: 64 }),
          }),
        ],
      }),
    expected: shared('tiny', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['true'],
                image: 'img',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'tiny' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '64' },
                ],
                linuxParameters: { sharedMemorySize: 64, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('tiny'),
      },
      submitJob: {
        jobName: 'tiny-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('tiny'),
      },
    }),
  },
  {
    title: 'ulimits, log group, timeout, retry rules and propagated tags',
    app: () =>
      makeAppDef({
        name: 'opts',
        roles: [
          makeRole({
            name: 'w',
            image: 'img',
            entrypoint: 'w',
            resource: makeResource({ cpu: 4, gpu: 0, memMB: 8192 }),
          }),
        ],
      }),
    cfg: {
      ulimits: { nofile: '65536:65536', memlock: '-1' },
      log_group: '/ml/jobs',
      timeout: 7200,
      retry_rules: ['retry:status_reason:Host EC2*', 'retry:exit_code:137', 'exit:exit_code:*'],
      propagate_tags: true,
    },
    expected: shared('opts', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['w'],
                image: 'img',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'w' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '4' },
                  { type: 'MEMORY', value: '8192' },
                ],
                linuxParameters: { sharedMemorySize: 8192, devices: [] },
                logConfiguration: { logDriver: 'awslogs', options: { 'awslogs-group': '/ml/jobs' } },
                mountPoints: [],
                volumes: [],
                ulimits: [
                  { name: 'memlock', softLimit: -1, hardLimit: -1 },
                  { name: 'nofile', softLimit: 65536, hardLimit: 65536 },
                ],
              },
            },
          ],
        },
        retryStrategy: {
          attempts: 1,
          evaluateOnExit: [
            EXIT_ON_ZERO,
            { onStatusReason: 'Host EC2*', action: 'RETRY' },
            { onExitCode: '137', action: 'RETRY' },
            { onExitCode: '*', action: 'EXIT' },
          ],
        },
        tags: torchxTags('opts'),
      },
      submitJob: {
        jobName: 'opts-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('opts'),
        timeout: { attemptDurationSeconds: 7200 },
        propagateTags: true,
      },
    }),
  },
  {
    title: 'app metadata becomes tags and may override the TorchX user tag, as in TorchX',
    app: () => {
      const app = materializeComponent('utils.echo', ['--msg', 'tagged']);
      app.metadata = { 'torchx.pytorch.org/user': 'svc-training', team: 'vision' };
      return app;
    },
    expected: shared('echo', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['echo', 'tagged'],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'echo' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: { ...torchxTags('echo', 'svc-training'), team: 'vision' },
      },
      submitJob: {
        jobName: 'echo-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: { ...torchxTags('echo', 'svc-training'), team: 'vision' },
      },
    }),
  },
  {
    title: 'a name Batch would reject, with a share id: sanitised job name, definition named after the app',
    app: () => {
      const app = materializeComponent('utils.touch', ['--file', '/tmp/x']);
      app.name = 'exp/run.1';
      return app;
    },
    cfg: { share_id: 'teamA', priority: 9999 },
    expected: shared('exp-run-1', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['touch', '/tmp/x'],
                image: IMAGE,
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'touch' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '1024' },
                ],
                linuxParameters: { sharedMemorySize: 1024, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('exp/run.1'),
        schedulingPriority: 9999,
      },
      submitJob: {
        jobName: 'exp-run-1-teamA-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('exp/run.1'),
        shareIdentifier: 'teamA',
      },
    }),
  },
  {
    title: "the runner's TORCHX_JOB_ID travels in node overrides, so utils.echo shares its definition",
    app: () => {
      const app = materializeComponent('utils.echo', []);
      app.roles[0]!.env = { TORCHX_JOB_ID: 'aws_batch://torchx/${app_id}' };
      return app;
    },
    expected: {
      registerJobDefinition: echoDefinition.registerJobDefinition,
      submitJob: {
        ...echoDefinition.submitJob,
        nodeOverrides: {
          nodePropertyOverrides: [
            {
              targetNodes: '0:0',
              containerOverrides: {
                environment: [{ name: 'TORCHX_JOB_ID', value: 'aws_batch://torchx/echo-t4rcs9x6sv1m' }],
              },
            },
          ],
        },
      },
    },
  },
  {
    title: 'a local image pushed to image_repo is referenced as <image_repo>:<hash>',
    app: () =>
      makeAppDef({
        name: 'local',
        roles: [
          makeRole({
            name: 'local',
            image: 'sha256:0123abcd',
            entrypoint: 'run',
            resource: makeResource({ cpu: 2, gpu: 0, memMB: 2048 }),
          }),
        ],
      }),
    cfg: { image_repo: '123456789012.dkr.ecr.us-east-1.amazonaws.com/me' },
    expected: shared('local', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['run'],
                image: '123456789012.dkr.ecr.us-east-1.amazonaws.com/me:0123abcd',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'local' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '2' },
                  { type: 'MEMORY', value: '2048' },
                ],
                linuxParameters: { sharedMemorySize: 2048, devices: [] },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [],
                volumes: [],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('local'),
      },
      submitJob: {
        jobName: 'local-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('local'),
      },
    }),
  },
  {
    title:
      'mounts: read-write bind, read-only EFS, a device with explicit permissions; names count every mount',
    app: () =>
      makeAppDef({
        name: 'mounts',
        roles: [
          makeRole({
            name: 'io',
            image: 'img',
            entrypoint: 'io',
            resource: makeResource({ cpu: 1, gpu: 0, memMB: 256 }),
            mounts: [
              { type: 'device', srcPath: '/dev/fuse', dstPath: '/dev/fuse0', permissions: 'rw' },
              { type: 'bind', srcPath: '/scratch', dstPath: '/tmp/scratch', readOnly: false },
              { type: 'volume', src: 'fs-abc', dstPath: '/mnt/efs', readOnly: true },
            ],
          }),
        ],
      }),
    expected: shared('mounts', {
      registerJobDefinition: {
        jobDefinitionName: 'HASHED',
        type: 'multinode',
        nodeProperties: {
          numNodes: 1,
          mainNode: 0,
          nodeRangeProperties: [
            {
              targetNodes: '0:0',
              container: {
                command: ['io'],
                image: 'img',
                environment: [
                  { name: 'TORCHX_ROLE_IDX', value: '0' },
                  { name: 'TORCHX_ROLE_NAME', value: 'io' },
                ],
                privileged: false,
                resourceRequirements: [
                  { type: 'VCPU', value: '1' },
                  { type: 'MEMORY', value: '256' },
                ],
                linuxParameters: {
                  sharedMemorySize: 256,
                  devices: [
                    { hostPath: '/dev/fuse', containerPath: '/dev/fuse0', permissions: ['READ', 'WRITE'] },
                  ],
                },
                logConfiguration: { logDriver: 'awslogs' },
                mountPoints: [
                  { containerPath: '/tmp/scratch', readOnly: false, sourceVolume: 'mount_1' },
                  { containerPath: '/mnt/efs', readOnly: true, sourceVolume: 'mount_2' },
                ],
                volumes: [
                  { name: 'mount_1', host: { sourcePath: '/scratch' } },
                  { name: 'mount_2', efsVolumeConfiguration: { fileSystemId: 'fs-abc' } },
                ],
              },
            },
          ],
        },
        retryStrategy: { attempts: 1, evaluateOnExit: [EXIT_ON_ZERO] },
        tags: torchxTags('mounts'),
      },
      submitJob: {
        jobName: 'mounts-t4rcs9x6sv1m',
        jobQueue: 'gpu',
        jobDefinition: 'HASHED',
        tags: torchxTags('mounts'),
      },
    }),
  },
];

describe('AwsBatchScheduler golden requests', () => {
  it('has at least 20 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
  });

  it.each(cases.map((c) => [c.title, c] as const))('%s', (_title, c) => {
    const { scheduler } = mockedScheduler();
    const info = scheduler.submitDryrun(c.app(), { queue: 'gpu', ...c.cfg });
    expect(info.request).toEqual(c.expected);
    expect(() => scheduler.validate(c.app(), { queue: 'gpu', ...c.cfg })).not.toThrow();
  });

  it('rejects utils.binary, whose role has no container image, naming the field', () => {
    const { scheduler } = mockedScheduler();
    const app = materializeComponent('utils.binary', ['--entrypoint', '/bin/true']);
    expect(() => scheduler.submitDryrun(app, { queue: 'gpu' })).toThrow(ValidationError);
    try {
      scheduler.validate(app, { queue: 'gpu' });
    } catch (e) {
      expect((e as ValidationError).issues).toEqual([
        {
          path: 'app.roles.0.image',
          message:
            'AWS Batch runs containers; give a container image (e.g. ghcr.io/pytorch/torchx:0.8.0dev0)',
        },
      ]);
    }
    expect.assertions(2);
  });
});
