/**
 * Errors of the components layer: an unknown component, or CLI-style arguments that do not fit a
 * component. Messages name the argument and say what to give instead.
 *
 * @module
 */
import { ValidationError } from '../specs/index.js';

/** The component name is not a builtin. */
export class UnknownComponentError extends ValidationError {
  override readonly code = 'UnknownComponent';
  constructor(
    readonly component: string,
    known: readonly string[],
  ) {
    const message = `unknown component '${component}'; builtins are: ${known.join(', ')}`;
    super(`Unknown component: ${component}. Builtins are: ${known.join(', ')}`, [
      { path: 'component', message },
    ]);
  }
}

/** An argument is unknown, missing, repeated or has a value of the wrong form. */
export class ComponentArgumentError extends ValidationError {
  override readonly code = 'InvalidComponentArgument';
  constructor(
    readonly component: string,
    readonly argument: string,
    problem: string,
  ) {
    super(`${component}: argument ${argument}: ${problem}`, [
      { path: `args`, message: `${argument}: ${problem}` },
    ]);
  }
}
