/**
 * Pieces shared by the builtin components: the default image, TorchX's `specs.resource`, and the experiment
 * and run name rules.
 *
 * @module
 */
import { MAX_REPLICAS, makeResource, namedResource, type Resource, ValidationError } from '../specs/index.js';

/**
 * The image builtin components use unless `--image` is given: TorchX's published image. Override it per
 * run with `--image`.
 */
export const DEFAULT_IMAGE = 'ghcr.io/pytorch/torchx:0.7.0';

/** Range of every component parameter that sets a replica count (the AppDef's own cap). */
export const REPLICA_RANGE = [1, MAX_REPLICAS] as const;

/** The experiment name TorchX uses when none is given. */
export const DEFAULT_EXPERIMENT_NAME = 'default-experiment';

/**
 * TorchX `specs.resource`: the named resource `h` when given, else `{cpu || 2, gpu || 0, memMB || 1024}`
 * (zero values fall back to the defaults).
 */
export function resourceFrom(cpu: number, gpu: number, memMB: number, h: string | undefined): Resource {
  if (h) return namedResource(h, 'args.h');
  return makeResource({ cpu: cpu || 2, gpu: gpu || 0, memMB: memMB || 1024 });
}

/** `experiment/run` names (TorchX `StructuredNameArgument`). */
export interface StructuredName {
  experimentName: string;
  runName: string;
}

/** The file name of `path` without its last extension (Python `Path(path).stem`). */
export function pathStem(path: string): string {
  const base = path.replace(/\/+$/, '').split('/').pop() ?? '';
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** The last dotted part of a module name (`a.b.c` → `c`). */
export function moduleLeaf(module: string): string {
  return module.slice(module.lastIndexOf('.') + 1);
}

/**
 * Parses `--name` the way TorchX does: `exp/run`, `exp/` (run derived), `/run`, `run`, `/`. A derived run name
 * is the last part of the module (`-m`) or the script's stem.
 *
 * @throws ValidationError when neither or both of `m` and `script` are given.
 */
export function parseStructuredName(
  name: string,
  m: string | undefined,
  script: string | undefined,
): StructuredName {
  if (!m && !script) {
    throw ValidationError.forField(
      'args',
      'No main module or script specified. Specify either a main module or a script path',
    );
  }
  if (m && script) {
    throw ValidationError.forField(
      'args',
      'Both main module and script set. Specify exactly one of: main module or script, but not both',
    );
  }
  let runName = '';
  let experimentName = '';
  const delim = name.indexOf('/');
  if (delim < 0) runName = name;
  else if (delim < name.length - 1) runName = name.slice(delim + 1);
  if (delim > 0) experimentName = name.slice(0, delim);
  if (!runName) runName = m ? moduleLeaf(m) : pathStem(script as string);
  return { experimentName: experimentName || DEFAULT_EXPERIMENT_NAME, runName };
}
