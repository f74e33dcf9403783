/**
 * Mapping of described AWS Batch jobs to TorchX's describe vocabulary: node groups,
 * roles and per-replica statuses. Pure: no SDK calls.
 *
 * @module
 */
import type { JobDetail, KeyValuePair, NodeRangeProperty, ResourceRequirement } from '@aws-sdk/client-batch';
import { type AppState, MISSING, makeRole, NONE, type ReplicaStatus, type Role } from '../../specs/index.js';
import { givenCommand } from '../workspace.js';
import { nodeRangeOf, resourceFromRequirements } from './container.js';
import { batchStateOf } from './state.js';
import { mainContainerOf, partReasonOf, roleContainerOf } from './task-containers.js';
import { ROLE_NAME_ENV } from './translate.js';

/** What describe reads of a node range's role container (a `container`, or an `ecsProperties` task's). */
export interface RangeContainer {
  image?: string;
  command?: string[];
  environment?: KeyValuePair[];
  resourceRequirements?: ResourceRequirement[];
  logConfiguration?: { options?: Record<string, string> };
}

/** The container of a node range that runs the role: its `container`, or its task's main container. */
export function rangeContainerOf(range: Readonly<NodeRangeProperty>): RangeContainer | undefined {
  return range.container ?? mainContainerOf(range.ecsProperties?.taskProperties?.[0]?.containers ?? []);
}

/** The environment of a node range's container as a map. */
export function envOf(container: RangeContainer | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of container?.environment ?? []) {
    if (pair.name !== undefined) env[pair.name] = pair.value ?? '';
  }
  return env;
}

/** One node group of a described job, with its node range. */
export interface NodeGroup {
  role: string;
  start: number;
  numReplicas: number;
  range: NodeRangeProperty;
}

/** The node groups (one per role) of a described multi-node job, in node order. */
export function nodeGroupsOf(job: JobDetail): NodeGroup[] {
  const numNodes = job.nodeProperties?.numNodes ?? 0;
  return (job.nodeProperties?.nodeRangeProperties ?? []).map((range) => {
    const { start, end } = nodeRangeOf(range.targetNodes ?? '', numNodes);
    return {
      role: envOf(rangeContainerOf(range))[ROLE_NAME_ENV] ?? 'node',
      start,
      numReplicas: end - start + 1,
      range,
    };
  });
}

/**
 * Roles rebuilt from a described job (TorchX `describe`): name, replicas, image, command, env, resource. A
 * role run in a workspace shows its own command, not the unpacking wrapper.
 */
export function rolesOf(job: JobDetail): Role[] {
  return nodeGroupsOf(job).map(({ role, numReplicas, range }) => {
    const container = rangeContainerOf(range) ?? {};
    const command = givenCommand(container.command ?? []);
    return makeRole({
      name: role,
      image: container.image ?? '',
      entrypoint: command[0] ?? MISSING,
      args: command.slice(1),
      env: envOf(container),
      numReplicas,
      resource: resourceFromRequirements(container.resourceRequirements ?? []),
    });
  });
}

/** The node index of a node job (`<parent>#<index>`), from its details or its id. */
export function nodeIndexOf(node: JobDetail): number | undefined {
  if (node.nodeDetails?.nodeIndex !== undefined) return node.nodeDetails.nodeIndex;
  const jobId = node.jobId ?? '';
  const hash = jobId.lastIndexOf('#');
  return hash < 0 ? undefined : Number.parseInt(jobId.slice(hash + 1), 10);
}

/**
 * A replica's status from its node job: state (FAILED nodes of a CANCELLED job are CANCELLED), host, exit
 * code and the Batch and container reasons; the parent's state when the node job is not known yet.
 */
export function replicaStatusOf(
  role: string,
  id: number,
  node: JobDetail | undefined,
  parentState: AppState,
): ReplicaStatus {
  if (node === undefined) return { id, role, state: parentState, hostname: '', structuredErrorMsg: NONE };
  let state = batchStateOf(node);
  if (state === 'FAILED' && parentState === 'CANCELLED') state = 'CANCELLED';
  const container = roleContainerOf(node);
  const status: ReplicaStatus = {
    id,
    role,
    state,
    hostname: container?.networkInterfaces?.[0]?.privateIpv4Address ?? '',
    structuredErrorMsg: NONE,
  };
  if (container?.exitCode !== undefined) status.exitCode = container.exitCode;
  const reason = partReasonOf(node);
  if (reason !== '') status.reason = reason;
  return status;
}
