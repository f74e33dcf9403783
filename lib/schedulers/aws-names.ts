/**
 * AWS name rules shared by the AWS schedulers' run options, from the service API models (see
 * `shared/reference/aws-facts.md`): values AWS would reject are refused in the dry run, before a record is
 * written or an AWS call is made.
 *
 * @module
 */
import { hasUnsafeNameCharacters } from '../specs/index.js';

/** A Batch job queue name (CreateJobQueue): 1–128 letters, digits, `-` and `_`. */
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Valid Batch job (and job definition) names. */
export const JOB_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** The SageMaker API's pattern for `TrainingJobName`. */
export const TRAINING_JOB_NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/** An IAM role ARN (the SageMaker and Batch API models' pattern); 20–2048 characters. */
export const IAM_ROLE_ARN_PATTERN = /^arn:aws[a-z-]*:iam::\d{12}:role\/?[a-zA-Z_0-9+=,.@\-_/]+$/;
/** Shortest and longest IAM role ARN. */
export const IAM_ROLE_ARN_LENGTH = { min: 20, max: 2_048 } as const;

/**
 * An S3 (or HTTPS) URI as SageMaker takes it: `s3://bucket/key…` (or `https://host/…`), the bucket or host
 * 1–255 letters, digits, `.`, `_` or `-` (S3's bucket rule, legacy names included), the key without
 * whitespace; control and format characters are refused too (see {@link isS3Uri}).
 */
export const S3_URI_PATTERN = /^(https|s3):\/\/[A-Za-z0-9._-]{1,255}(\/\S*)?$/;
/** Longest S3 URI SageMaker accepts. */
export const MAX_S3_URI_LENGTH = 1_024;

/**
 * True when `value` is an IAM role ARN AWS accepts.
 *
 * @example
 * ```ts
 * isIamRoleArn('arn:aws:iam::123456789012:role/sm-exec'); // true
 * ```
 */
export function isIamRoleArn(value: string): boolean {
  return (
    value.length >= IAM_ROLE_ARN_LENGTH.min &&
    value.length <= IAM_ROLE_ARN_LENGTH.max &&
    IAM_ROLE_ARN_PATTERN.test(value)
  );
}

/**
 * True when `value` is an S3 URI SageMaker accepts (see {@link S3_URI_PATTERN}).
 *
 * @example
 * ```ts
 * isS3Uri('s3://my-bucket/out/'); // true
 * isS3Uri('s3://my-bucket/out\n'); // false
 * ```
 */
export function isS3Uri(value: string): boolean {
  return value.length <= MAX_S3_URI_LENGTH && S3_URI_PATTERN.test(value) && !hasUnsafeNameCharacters(value);
}
