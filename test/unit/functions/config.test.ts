import { describe, expect, it, vi } from 'vitest';
import { ConfigError, readFunctionConfig } from '../../../functions/shared/config.js';
import { DEFAULT_WORKSPACE_DAYS, ENV } from '../../../functions/shared/env-names.js';

const BASE = { [ENV.tableName]: 'apps' };

describe('readFunctionConfig', () => {
  it('reads the deployed defaults from a minimal environment', () => {
    expect(readFunctionConfig(BASE)).toEqual({
      tableName: 'apps',
      schedulers: ['aws_batch', 'aws_sagemaker'],
      sessionName: 'torchx',
      batchQueues: [],
      slurm: { gpusPerNode: false },
      kubernetes: {},
      workspaceDays: DEFAULT_WORKSPACE_DAYS,
    });
  });

  it('reads every variable', () => {
    expect(
      readFunctionConfig({
        ...BASE,
        [ENV.eventBusName]: 'bus',
        [ENV.schedulers]: 'aws_batch, local_cwd',
        [ENV.sessionName]: 'team-a',
        [ENV.batchQueues]: 'gpu,cpu',
        [ENV.retentionDays]: '30',
        [ENV.dynamoDbEndpoint]: 'http://127.0.0.1:8000',
        [ENV.localDataDir]: '/tmp/txs',
        [ENV.workspaceBucket]: 'txs-workspaces-123',
        [ENV.workspaceDays]: '14',
      }),
    ).toEqual({
      tableName: 'apps',
      eventBusName: 'bus',
      schedulers: ['aws_batch', 'local_cwd'],
      sessionName: 'team-a',
      batchQueues: ['gpu', 'cpu'],
      retentionDays: 30,
      workspaceBucket: 'txs-workspaces-123',
      workspaceDays: 14,
      dynamoDbEndpoint: 'http://127.0.0.1:8000',
      localDataDir: '/tmp/txs',
      slurm: { gpusPerNode: false },
      kubernetes: {},
    });
  });

  it("takes the local server's settings instead of the environment's", () => {
    expect(
      readFunctionConfig(
        { ...BASE, [ENV.schedulers]: 'aws_batch', [ENV.sessionName]: 'team-a' },
        {
          tableName: 'local',
          schedulers: ['local_cwd'],
          dynamoDbEndpoint: 'http://127.0.0.1:8000',
          localDataDir: '/tmp/txs',
          localReplicaUmask: 0o22,
        },
      ),
    ).toEqual({
      tableName: 'local',
      schedulers: ['local_cwd'],
      sessionName: 'team-a',
      batchQueues: [],
      workspaceDays: DEFAULT_WORKSPACE_DAYS,
      dynamoDbEndpoint: 'http://127.0.0.1:8000',
      localDataDir: '/tmp/txs',
      localReplicaUmask: 0o22,
      localHostEnv: { ...BASE, [ENV.schedulers]: 'aws_batch', [ENV.sessionName]: 'team-a' },
      slurm: { gpusPerNode: false },
      kubernetes: {},
    });
  });

  it('names every bad variable, its value and what it accepts, instead of falling back', () => {
    const read = () =>
      readFunctionConfig({
        [ENV.retentionDays]: 'ninety',
        [ENV.schedulers]: 'aws_batch,no_such_scheduler',
        [ENV.sessionName]: 'has space',
        [ENV.dynamoDbEndpoint]: 'not a url',
        [ENV.workspaceBucket]: 'Not_A_Bucket',
        [ENV.workspaceDays]: '1',
      });
    expect(read).toThrow(ConfigError);
    const message = (() => {
      try {
        read();
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    })();
    expect(message).toContain(`${ENV.tableName} is not set`);
    expect(message).toContain(`${ENV.retentionDays}='ninety' must be a whole number of days`);
    expect(message).toContain("unknown scheduler 'no_such_scheduler'");
    expect(message).toContain(`${ENV.sessionName}='has space'`);
    expect(message).toContain(`${ENV.dynamoDbEndpoint}='not a url' is not a URL`);
    expect(message).toContain(`${ENV.workspaceBucket}='Not_A_Bucket' is not an S3 bucket name`);
    expect(message).toContain(`${ENV.workspaceDays}='1' must be a whole number of days, at least 2`);
  });

  it('rejects a zero or fractional retention and local_cwd without a data directory', () => {
    expect(() => readFunctionConfig({ ...BASE, [ENV.retentionDays]: '0' })).toThrow(/TXS_RETENTION_DAYS='0'/);
    expect(() => readFunctionConfig({ ...BASE, [ENV.retentionDays]: '1.5' })).toThrow(
      /TXS_RETENTION_DAYS='1.5'/,
    );
    expect(() => readFunctionConfig({ ...BASE, [ENV.schedulers]: 'local_cwd' })).toThrow(
      /TXS_LOCAL_DATA_DIR/,
    );
  });
});

describe('event and reconciler handlers', () => {
  it('flush their metrics even when the invocation fails (a bad configuration here)', async () => {
    vi.stubEnv(ENV.tableName, '');
    const { metrics } = await import('../../../functions/shared/powertools.js');
    const { configureClients } = await import('../../../functions/shared/container.js');
    configureClients(undefined);
    const flush = vi.spyOn(metrics, 'publishStoredMetrics');
    const { handler: reconcile } = await import('../../../functions/reconciler/handler.js');
    await expect(reconcile({}, { awsRequestId: 'r1', functionName: 'Reconciler' } as never)).rejects.toThrow(
      ConfigError,
    );
    expect(flush).toHaveBeenCalledTimes(1);
    vi.unstubAllEnvs();
  });
});
