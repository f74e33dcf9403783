/** What the container hands a backend module when it loads it. */
import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { SchedulerFactory } from '../../../lib/schedulers/registry.js';
import type { AppStateTransition } from '../../../lib/specs/index.js';
import type { FunctionConfig } from '../config.js';
import type { DeploymentConfig } from '../deployment-config.js';

/** Dependencies of a scheduler backend's factory. */
export interface BackendDeps {
  /** Registers a client the container created (tests and benchmarks add middleware here). */
  created<T extends object>(client: T): T;
  /** The process's one CloudWatch Logs client, created by `make` on first use. */
  logsClient(make: () => CloudWatchLogsClient): CloudWatchLogsClient;
  /** The function's configuration, validated at cold start. */
  config: FunctionConfig;
  /** The deployment's security settings (stack tag, SageMaker instance types). */
  deployment: DeploymentConfig;
  /** Local mode: where local scheduler state changes go. */
  emitLocalTransition(appId: string, transition: AppStateTransition): Promise<void>;
}

/** A backend module's factory: a scheduler factory built from the container's dependencies. */
export type BackendFactory = (deps: BackendDeps) => SchedulerFactory;
