/**
 * How a bad prop is reported: each problem names the prop and the fix, and all of them are thrown together
 * at synth time, before anything is built. A leaf module: the props' checks (./validate-props.ts,
 * ./security.ts) and the deploy configuration (../config.ts) all report through it.
 *
 * @module
 */

/** One problem with a prop: which one (`batchJobRoleArns.0`) and what is wrong with it. */
export interface PropIssue {
  readonly path: string;
  readonly message: string;
}

/** Thrown at synth time when `TorchxServerlessProps` would deploy a broken or over-privileged stack. */
export class TorchxServerlessPropsError extends Error {
  override readonly name = 'TorchxServerlessPropsError';
  /** Every problem found, each naming the prop. */
  readonly issues: readonly PropIssue[];

  constructor(issues: readonly PropIssue[]) {
    super(`Invalid TorchxServerless props: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}
