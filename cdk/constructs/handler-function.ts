/**
 * One Lambda function built from a handler module with the house defaults: local rolldown bundling with the
 * one definition of lambda-bundling.ts (ESM, minified, code splitting, the pinned AWS SDK bundled, no Docker)
 * or the bundle `npm run build` prebuilt with the same options, Node.js 22 on arm64, X-Ray tracing, its own
 * log group with a retention, and its own role that may write only to that log group.
 *
 * @module
 */
import { AssetHashType, DockerImage, Duration, type ILocalBundling, type RemovalPolicy } from 'aws-cdk-lib';
import type { ISecurityGroup, IVpc, SubnetSelection } from 'aws-cdk-lib/aws-ec2';
import { type IRole, ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import {
  Alias,
  Architecture,
  Code,
  Function as LambdaFunction,
  Runtime,
  Tracing,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { bundleFunction } from './lambda-bundling.js';

/** Props of {@link HandlerFunction}. */
export interface HandlerFunctionProps {
  /** Handler module, relative to `projectRoot` (e.g. `functions/api/run.ts`). It exports `handler`. */
  readonly entry: string;
  /** Repository root: where `entry` and `node_modules` (with rolldown) are. */
  readonly projectRoot: string;
  /**
   * Directory holding this function's prebuilt `index.mjs` and `chunks/` (with their source maps), as
   * `npm run build` writes it. When set, the function deploys that directory as is and nothing is bundled at
   * synth time.
   * @default - rolldown bundles `entry` from `projectRoot` at synth time
   */
  readonly prebuiltDir?: string;
  /** One line saying what the function does (shown in the Lambda console). */
  readonly description: string;
  /** Environment variables. */
  readonly environment: Readonly<Record<string, string>>;
  /** How long the function keeps its logs. */
  readonly logRetention: RetentionDays;
  /** What happens to the log group when the stack is deleted. */
  readonly logRemovalPolicy: RemovalPolicy;
  /** Memory in MB. @default 512 */
  readonly memorySize?: number;
  /** Timeout. @default 30 seconds */
  readonly timeout?: Duration;
  /** VPC to place the function in (its role then gets the ENI permissions Lambda needs). @default - no VPC */
  readonly vpc?: IVpc;
  /** Subnets of `vpc`. @default - the VPC's private subnets */
  readonly vpcSubnets?: SubnetSelection;
  /** Security groups of the function in `vpc`. @default - one created by Lambda with all outbound traffic */
  readonly securityGroups?: readonly ISecurityGroup[];
  /**
   * Execution environments kept initialized (no cold starts). Creates the alias `live` on a new version;
   * callers invoke the alias ({@link HandlerFunction.invokable}).
   * @default - none (on-demand)
   */
  readonly provisionedConcurrency?: number;
}

/**
 * A Lambda function with the house defaults, its log group and its role. Grant the function what it calls
 * through {@link HandlerFunction.role}; it starts with write access to its own log group only (no managed
 * policy).
 *
 * @example
 * ```ts
 * const fn = new HandlerFunction(this, 'Run', {
 *   entry: 'functions/api/run.ts', projectRoot, description: 'POST /v1/apps',
 *   environment: { TXS_TABLE_NAME: table.tableName },
 *   logRetention: RetentionDays.ONE_MONTH, logRemovalPolicy: RemovalPolicy.RETAIN,
 * });
 * table.grantReadWriteData(fn.role);
 * ```
 */
export class HandlerFunction extends Construct {
  /** The Lambda function. */
  readonly function: LambdaFunction;
  /** The function's execution role. */
  readonly role: IRole;
  /** The function's log group. */
  readonly logGroup: LogGroup;
  /** What callers invoke: the `live` alias with provisioned concurrency, else the function. */
  readonly invokable: LambdaFunction | Alias;

  constructor(scope: Construct, id: string, props: HandlerFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.entry}`,
    });
    // The log group exists before the function runs, so the role needs no logs:CreateLogGroup.
    this.logGroup.grantWrite(role);
    this.role = role;

    const common = {
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(30),
      tracing: Tracing.ACTIVE,
      role,
      logGroup: this.logGroup,
      environment: { ...props.environment },
      ...(props.vpc === undefined
        ? {}
        : {
            vpc: props.vpc,
            ...(props.vpcSubnets === undefined ? {} : { vpcSubnets: props.vpcSubnets }),
            ...(props.securityGroups === undefined ? {} : { securityGroups: [...props.securityGroups] }),
          }),
    };
    if (props.vpc !== undefined)
      role.addManagedPolicy(
        ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaVPCAccessExecutionRole'),
      );
    this.function = new LambdaFunction(this, 'Function', {
      ...common,
      code:
        props.prebuiltDir === undefined
          ? bundledCode(props.projectRoot, props.entry)
          : Code.fromAsset(props.prebuiltDir),
      handler: 'index.handler',
    });
    this.invokable =
      props.provisionedConcurrency === undefined
        ? this.function
        : new Alias(this, 'Live', {
            aliasName: 'live',
            version: this.function.currentVersion,
            provisionedConcurrentExecutions: props.provisionedConcurrency,
          });
  }
}

/**
 * CDK's local bundling of one function with the shared definition. Its fields are part of the key CDK caches
 * staged assets by (a plain object with only `tryBundle` would give every function the first one's bundle).
 */
class LocalBundling implements ILocalBundling {
  constructor(
    readonly projectRoot: string,
    readonly entry: string,
  ) {}

  tryBundle(outputDir: string): boolean {
    bundleFunction(this.projectRoot, this.entry, outputDir);
    return true;
  }
}

/**
 * The code of `entry`, bundled at synth time with the rolldown of `projectRoot` (no Docker). The asset is
 * hashed by its output, as NodejsFunction does; a synth that skips bundling (tests) bundles nothing.
 */
function bundledCode(projectRoot: string, entry: string): Code {
  return Code.fromAsset(projectRoot, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never used: local bundling always succeeds or throws (no rolldown in projectRoot).
      image: DockerImage.fromRegistry('dummy'),
      local: new LocalBundling(projectRoot, entry),
    },
  });
}
