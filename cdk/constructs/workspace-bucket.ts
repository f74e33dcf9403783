/**
 * The workspace bucket: where `txs run --workspace` archives go in a deployed stack, uploaded straight to S3
 * through presigned URLs (functions/workspaces/bucket.ts) and fetched by the jobs. Encrypted, never
 * public, TLS only, and temporary: a lifecycle rule expires every archive some days after its upload (a
 * re-run renews it), and aborts multipart uploads left incomplete. The job roles the construct knows read the
 * archives through the bucket policy; no caller of the API reads or writes the bucket itself.
 *
 * @module
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { ArnPrincipal, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type CfnBucket,
  ObjectOwnership,
} from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { WORKSPACE_KEY_PREFIX } from '../../functions/shared/env-names.js';

/** Props of {@link WorkspaceArchiveBucket}. */
export interface WorkspaceArchiveBucketProps {
  /** How long an archive is kept after its upload (whole days). */
  readonly expiration: Duration;
  /**
   * RETAIN, or DESTROY: deleting the stack then empties the bucket first (CDK's auto-delete custom
   * resource), as CloudFormation deletes no bucket that still holds objects.
   */
  readonly removalPolicy: RemovalPolicy;
  /**
   * Roles whose jobs fetch workspaces (Batch job roles, SageMaker execution roles): `s3:GetObject` on the
   * archives, and `s3:ListBucket` of the archive prefix (a SageMaker `S3Prefix` channel lists its key before
   * it downloads), through the bucket policy.
   */
  readonly readerRoleArns: readonly string[];
}

/** The bucket of workspace archives. */
export class WorkspaceArchiveBucket extends Bucket {
  constructor(scope: Construct, id: string, props: WorkspaceArchiveBucketProps) {
    super(scope, id, {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      versioned: false,
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: props.removalPolicy === RemovalPolicy.DESTROY,
      lifecycleRules: [
        {
          id: 'ExpireWorkspaces',
          prefix: WORKSPACE_KEY_PREFIX,
          expiration: props.expiration,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });
    if (props.readerRoleArns.length > 0) {
      this.addToResourcePolicy(
        new PolicyStatement({
          sid: 'JobRolesReadWorkspaces',
          principals: props.readerRoleArns.map((arn) => new ArnPrincipal(arn)),
          actions: ['s3:GetObject'],
          resources: [this.archivesArn()],
        }),
      );
      this.addToResourcePolicy(
        new PolicyStatement({
          sid: 'JobRolesListWorkspaces',
          principals: props.readerRoleArns.map((arn) => new ArnPrincipal(arn)),
          actions: ['s3:ListBucket'],
          resources: [this.bucketArn],
          conditions: { StringLike: { 's3:prefix': `${WORKSPACE_KEY_PREFIX}*` } },
        }),
      );
    }
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Archives are written only through upload URLs the Workspaces function signs for the authenticated caller (its invocations are logged) and read by job roles; S3 data events in CloudTrail give per-object logs where required.',
    });
  }

  /** The bucket's logical id, as cdk-nag names a reference to it in findings (`<id.Arn>`). */
  logicalIdForNag(): string {
    return Stack.of(this).resolve((this.node.defaultChild as CfnBucket).logicalId) as string;
  }

  /** The ARN of every archive (`<bucket>/workspaces/*`). */
  archivesArn(): string {
    return this.arnForObjects(`${WORKSPACE_KEY_PREFIX}*`);
  }
}
