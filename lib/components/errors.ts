/**
 * Errors of the components layer: an unknown component, or CLI-style arguments that do not fit a
 * component. Messages name the argument and say what to give instead.
 *
 * @module
 */
import { suggestNames, ValidationError } from '../specs/index.js';

/** The component name is not a builtin. */
export class UnknownComponentError extends ValidationError {
  override readonly code = 'UnknownComponent';
  constructor(
    readonly component: string,
    known: readonly string[],
  ) {
    const close = suggestNames(component, known);
    const message = `unknown component '${component}'${close.length > 0 ? `; did you mean ${close.join(' or ')}?` : ''}`;
    // The issue's message is part of the main one, so a client printing both shows the list once.
    super(`${message}${close.length > 0 ? '' : '.'} Builtins are: ${known.join(', ')}`, [
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
