/**
 * What a scheduler module is (the entries of the scheduler table, `table.ts`): its `create` builds the
 * scheduler's factory from the dependencies the table gives every module.
 */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { SchedulerFactory } from '../../lib/schedulers/registry.js';
import type { AppStateTransition } from '../../lib/specs/index.js';
import type { FunctionConfig } from '../shared/config.js';
import type { DeploymentConfig } from '../shared/deployment-config.js';

/** What a scheduler module's `create` is given: built once per cold start, shared by every scheduler. */
export interface SchedulerDeps {
  /**
   * True for the Runner; false for the Planner, whose schedulers only translate: an AWS scheduler's module
   * then loads no SDK and creates no client.
   */
  submits: boolean;
  /** Registers a client the module created (X-Ray subsegments; tests and benchmarks add middleware). */
  created<T extends object>(client: T): T;
  /**
   * The process's one CloudWatch Logs client, created (and its code imported) when a scheduler first reads
   * a log: a function that reads none loads no CloudWatch Logs code.
   */
  logsClient(): Promise<CloudWatchLogsClient>;
  /** The function's configuration, validated at cold start. */
  config: FunctionConfig;
  /** The deployment's security settings (stack tag, SageMaker instance types). */
  deployment: DeploymentConfig;
  /** Local mode: where local scheduler state changes go. */
  emitLocalTransition(appId: string, transition: AppStateTransition): Promise<void>;
}

/** A scheduler's module: builds the scheduler's factory from the dependencies. */
export interface SchedulerModule {
  create(deps: SchedulerDeps): SchedulerFactory | Promise<SchedulerFactory>;
}
