/**
 * The shape of a builtin component: declared parameters (for the parser, `GET /v1/components` and
 * `txs builtins`) and a pure function from parsed arguments to an AppDef.
 *
 * @module
 */
import type { AppDef } from '../specs/index.js';
import type { ComponentArgs, ComponentParam, VarargsParam } from './args.js';

/** What a component may read from its caller's environment (TorchX reads `LOGLEVEL` from the process). */
export interface ComponentContext {
  /** Environment of the caller, e.g. the CLI's `process.env`. Empty on the server. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A builtin component. */
export interface ComponentDefinition {
  /** Dotted name, e.g. `dist.ddp`. */
  name: string;
  /** One-paragraph description. */
  description: string;
  params: readonly ComponentParam[];
  varargs?: VarargsParam;
  /** Builds the AppDef; pure. */
  build(args: ComponentArgs, context: ComponentContext): AppDef;
}

/** JSON description of a component (for `GET /v1/components`). */
export interface ComponentDescription {
  name: string;
  description: string;
  args: { name: string; flags: string[]; type: string; default: unknown; required: boolean; help: string }[];
  varargs?: VarargsParam;
}
