/**
 * Builtin components and the registry behind `GET /v1/components`, `txs builtins` and
 * `{component, args}` run requests.
 *
 * @module
 */
import type { AppDef } from '../specs/index.js';
import { parseComponentArgs } from './args.js';
import type { ComponentContext, ComponentDefinition, ComponentDescription } from './definition.js';
import { ddpComponent, spmdComponent } from './dist.js';
import { UnknownComponentError } from './errors.js';
import {
  binaryComponent,
  copyComponent,
  echoComponent,
  pythonComponent,
  shComponent,
  touchComponent,
} from './utils.js';

export * from './args.js';
export { DEFAULT_EXPERIMENT_NAME, DEFAULT_IMAGE, parseStructuredName, resourceFrom } from './common.js';
export * from './definition.js';
export { ddpAppDef, MAX_PROCS_PER_NODE, parseNnodes, spmdJ, TORCH_DEBUG_FLAGS } from './dist.js';
export * from './errors.js';
export { parseMounts } from './mounts.js';

const BUILTINS: ReadonlyMap<string, ComponentDefinition> = new Map(
  [
    ddpComponent,
    spmdComponent,
    echoComponent,
    shComponent,
    pythonComponent,
    touchComponent,
    copyComponent,
    binaryComponent,
  ].map((c) => [c.name, c]),
);

/** Names of the builtin components. */
export function componentNames(): string[] {
  return [...BUILTINS.keys()];
}

/**
 * The builtin named `name`.
 *
 * @throws UnknownComponentError listing the builtins.
 */
export function getComponent(name: string): ComponentDefinition {
  const component = BUILTINS.get(name);
  if (!component) throw new UnknownComponentError(name, componentNames());
  return component;
}

/**
 * Turns TorchX-style CLI arguments into an AppDef (TorchX `materialize_appdef`).
 *
 * @throws UnknownComponentError, ComponentArgumentError or ValidationError naming the bad argument.
 * @example
 * ```ts
 * const app = materializeComponent('dist.ddp', ['-j', '2x8', '--script', 'train.py', '--', '--epochs', '10']);
 * app.roles[0].numReplicas; // 2
 * ```
 */
export function materializeComponent(
  name: string,
  args: readonly string[],
  context: ComponentContext = {},
): AppDef {
  const component = getComponent(name);
  const parsed = parseComponentArgs(name, component.params, component.varargs, args);
  return component.build(parsed, context);
}

/** JSON description of every builtin (for `GET /v1/components`). */
export function describeComponents(): ComponentDescription[] {
  return [...BUILTINS.values()].map((c) => {
    const description: ComponentDescription = {
      name: c.name,
      description: c.description,
      args: c.params.map((p) => ({
        name: p.name,
        flags: p.name.length === 1 ? [`-${p.name}`, `--${p.name}`] : [`--${p.name}`],
        type: p.type,
        default: p.default ?? null,
        required: p.default === undefined,
        help: p.help,
      })),
    };
    if (c.varargs) description.varargs = c.varargs;
    return description;
  });
}
