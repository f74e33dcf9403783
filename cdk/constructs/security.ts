/**
 * The construct's security settings (docs/security.md): who is an admin, which roles have per-session owners,
 * what host access jobs may have, which SageMaker instance types runs may use, reserved concurrency and API
 * logging. Each prop is checked at synth time and reaches the functions as an environment variable
 * (functions/shared/env-names.ts), where it is read and checked again once per cold start.
 *
 * @module
 */
import { Token } from 'aws-cdk-lib';
import type { CfnFunction, IFunction } from 'aws-cdk-lib/aws-lambda';
import { CONTAINER_IMAGE_PATTERN, ENV, STACK_TAG_KEY } from '../../functions/shared/env-names.js';
import type { PropIssue } from './prop-issues.js';

/** What jobs may do on their hosts. Everything is refused unless allowed here. */
export interface HostAccessProps {
  /** Allow privileged containers (aws_batch's `privileged` run option). @default false */
  readonly privileged?: boolean;
  /** Absolute host path prefixes bind mounts may name (`/scratch` covers `/scratch/x`), or `['*']` for any. @default - none */
  readonly hostPathPrefixes?: readonly string[];
  /** Absolute host device paths device mounts may name (`/dev/fuse`), or `['*']` for any. @default - none */
  readonly devices?: readonly string[];
}

/** Security props of the construct (part of `TorchxServerlessProps`). */
export interface SecurityProps {
  /**
   * Principals that may list (`GET /v1/apps?owner=all`), read, cancel and delete every owner's apps: IAM role
   * ARNs (every session of the role), IAM user ARNs, or role session ARNs of per-session owner roles
   * (`TXS_ADMIN_PRINCIPALS`).
   * @default - none
   */
  readonly adminPrincipals?: readonly string[];
  /**
   * IAM role names (a trailing `*` matches a prefix) whose sessions are separate owners because a trusted
   * identity provider sets the session name, e.g. `AWSReservedSSO_*` for IAM Identity Center
   * (`TXS_SESSION_OWNER_ROLES`). Every other role is one owner for all its sessions.
   * @default - none: every role is one owner
   */
  readonly perSessionOwnerRoles?: readonly string[];
  /** Host access jobs may have. @default - none: privileged containers, bind mounts and devices are refused */
  readonly hostAccess?: HostAccessProps;
  /**
   * SageMaker training instance types runs may use: checked by the Run function (403
   * `InstanceTypeNotAllowed`) and by IAM (`sagemaker:InstanceTypes`).
   * @default - any instance type
   */
  readonly sageMakerInstanceTypes?: readonly string[];
  /**
   * Image of the container that copies a job's workspace from S3 before the job starts (`aws_batch`, with the
   * job role; `kubernetes` and `kubernetes_mcad`, with the pod's service account) (`TXS_WORKSPACE_FETCH_IMAGE`):
   * an AWS CLI image whose entrypoint is `aws`. Name a copy in your
   * own ECR when the compute environments cannot reach the public ECR gallery (docs/workspaces.md).
   * @default - a pinned public.ecr.aws/aws-cli/aws-cli
   */
  readonly workspaceFetchImage?: string;
  /**
   * Reserved concurrency per function: one number for every API function, or a number per function name
   * (`Run`, `Logs`, …, `StateChange`, `Reconciler`). Caps what one route can take from the others and from the
   * account. Lambda refuses reservations that leave the account fewer than 100 unreserved executions, so a
   * new account (quota 10) cannot reserve any: the default reserves nothing.
   * @default - no reservation
   */
  readonly reservedConcurrency?: number | Readonly<Record<string, number>>;
  /**
   * API Gateway access logs and execution (error) logs. They need the account-wide API Gateway CloudWatch
   * role: set `apiGatewayCloudWatchRole` to create it, or turn this on when the account already has one.
   * @default - the value of apiGatewayCloudWatchRole (false)
   */
  readonly apiLogging?: boolean;
}

const ROLE_PATTERN = /^[\w+=,.@-]{1,64}\*?$/;
const PRINCIPAL_ARN =
  /^arn:aws[a-z-]*:(iam::\d{12}:(role|user)\/[\w+=,.@/-]{1,512}|sts::\d{12}:assumed-role\/[\w+=,.@-]{1,64}\/[\w+=,.@-]{2,64})$/;
const INSTANCE_TYPE = /^ml\.[a-z0-9-]+\.[a-z0-9]+$/;
const ABSOLUTE = /^\/[^,\0]*$/;

/**
 * Adds an issue for each value of a list prop that fails `ok` (`<name>.<i>: '<value>' is not <expected>`);
 * unresolved tokens are not checked.
 */
export function checkEach(
  issues: PropIssue[],
  name: string,
  values: readonly string[] | undefined,
  ok: (value: string) => boolean,
  expected: string,
): void {
  values?.forEach((value, i) => {
    if (!Token.isUnresolved(value) && !ok(value))
      issues.push({ path: `${name}.${i}`, message: `'${value}' is not ${expected}` });
  });
}

/** The names of every function, for per-function reserved concurrency. */
export type FunctionNames = readonly string[];

/**
 * Checks the security props.
 *
 * @returns every problem, each naming the prop.
 */
export function securityIssues(props: SecurityProps, functionNames: FunctionNames): PropIssue[] {
  const issues: PropIssue[] = [];
  const each = (
    name: string,
    values: readonly string[] | undefined,
    ok: (v: string) => boolean,
    what: string,
  ) => checkEach(issues, name, values, ok, what);
  each(
    'adminPrincipals',
    props.adminPrincipals,
    (v) => PRINCIPAL_ARN.test(v),
    'an IAM role or user ARN (arn:aws:iam::123456789012:role/PlatformAdmin) or a role session ARN',
  );
  each(
    'perSessionOwnerRoles',
    props.perSessionOwnerRoles,
    (v) => ROLE_PATTERN.test(v),
    'a role name (a trailing * matches a prefix)',
  );
  each(
    'sageMakerInstanceTypes',
    props.sageMakerInstanceTypes,
    (v) => INSTANCE_TYPE.test(v),
    'a SageMaker instance type such as ml.g5.xlarge',
  );
  if (props.workspaceFetchImage !== undefined && !CONTAINER_IMAGE_PATTERN.test(props.workspaceFetchImage)) {
    issues.push({
      path: 'workspaceFetchImage',
      message: 'must be a container image such as public.ecr.aws/aws-cli/aws-cli:2.31.23',
    });
  }
  for (const key of ['hostPathPrefixes', 'devices'] as const) {
    const values = props.hostAccess?.[key];
    if (values?.includes('*') && values.length > 1) {
      issues.push({
        path: `hostAccess.${key}`,
        message: "'*' allows everything; give it alone or list paths",
      });
    }
    each(`hostAccess.${key}`, values, (v) => v === '*' || ABSOLUTE.test(v), 'an absolute path (or * alone)');
  }
  const reserved = props.reservedConcurrency;
  const entries: [string, number][] =
    reserved === undefined
      ? []
      : typeof reserved === 'number'
        ? [['reservedConcurrency', reserved]]
        : Object.entries(reserved).map(([k, v]) => [`reservedConcurrency.${k}`, v]);
  for (const [path, value] of entries) {
    if (!(Number.isInteger(value) && value >= 1))
      issues.push({ path, message: `must be a whole number of at least 1, got ${value}` });
  }
  if (reserved !== undefined && typeof reserved !== 'number') {
    for (const name of Object.keys(reserved)) {
      if (!functionNames.includes(name)) {
        issues.push({
          path: `reservedConcurrency.${name}`,
          message: `is not a function; use one of ${functionNames.join(', ')}`,
        });
      }
    }
  }
  return issues;
}

/** The environment variables that carry the security props (only those that are set), plus the stack tag. */
export function securityEnvironment(props: SecurityProps, stackName: string): Record<string, string> {
  const env: Record<string, string> = { [ENV.stackName]: stackName };
  const set = (name: string, values: readonly string[] | undefined) => {
    if (values !== undefined && values.length > 0) env[name] = values.join(',');
  };
  set(ENV.adminPrincipals, props.adminPrincipals);
  set(ENV.sessionOwnerRoles, props.perSessionOwnerRoles);
  set(ENV.allowedHostPaths, props.hostAccess?.hostPathPrefixes);
  set(ENV.allowedDevices, props.hostAccess?.devices);
  set(ENV.sageMakerInstanceTypes, props.sageMakerInstanceTypes);
  if (props.hostAccess?.privileged === true) env[ENV.allowPrivileged] = 'true';
  if (props.workspaceFetchImage !== undefined) env[ENV.workspaceFetchImage] = props.workspaceFetchImage;
  return env;
}

/** The stack tag the functions add to every job, as the IAM conditions name it. */
export function stackTagOf(stackName: string): { key: string; value: string } {
  return { key: STACK_TAG_KEY, value: stackName };
}

/**
 * Sets a function's reserved concurrency from the prop: per name when a map, the same number for every API
 * function when a number (the event functions are left alone then: the reconciler runs alone, and state changes
 * must not be throttled into the dead-letter queue).
 */
export function applyReservedConcurrency(
  fn: IFunction,
  name: string,
  isApiRoute: boolean,
  reserved: SecurityProps['reservedConcurrency'],
): void {
  const value = typeof reserved === 'number' ? (isApiRoute ? reserved : undefined) : reserved?.[name];
  if (value === undefined) return;
  (fn.node.defaultChild as CfnFunction).reservedConcurrentExecutions = value;
}
