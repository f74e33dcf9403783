/**
 * Named resources with TorchX's exact numbers: AWS instance types (`aws_p4d.24xlarge`) and generic sizes
 * (`gpu.small`). AWS entries carry the `node.kubernetes.io/instance-type` capability and EFA/Neuron devices.
 *
 * @module
 */
import { INSTANCE_TYPE_CAPABILITY, makeResource, NULL_RESOURCE, type Resource } from './app-def.js';
import { UnknownNamedResourceError } from './errors.js';

/** Device name of an Elastic Fabric Adapter interface. */
export const EFA_DEVICE = 'vpc.amazonaws.com/efa';
/** Device name of an AWS Neuron (Trainium/Inferentia) device. */
export const NEURON_DEVICE = 'aws.amazon.com/neurondevice';

/** TorchX's memory tax: 1 GiB of instance memory is counted as 983 MiB (`int(1024 * 0.96)`). */
export const AWS_GIB_MB = 983;

type Spec = readonly [cpu: number, gpu: number, memMB: number, efa?: number, neuron?: number];

const AWS: Readonly<Record<string, Spec>> = {
  't3.medium': [2, 0, 3932],
  'm5.2xlarge': [8, 0, 31456],
  'c5.18xlarge': [72, 0, 139586],
  'p3.2xlarge': [8, 1, 59963],
  'p3.8xlarge': [32, 4, 239852],
  'p3.16xlarge': [64, 8, 479704],
  'p3dn.24xlarge': [96, 8, 754944, 1],
  'p4d.24xlarge': [96, 8, 1132416, 4],
  'p4de.24xlarge': [96, 8, 1132416, 4],
  'p5.48xlarge': [192, 8, 2013184, 32],
  'p5en.48xlarge': [192, 8, 2013184, 16],
  'g4dn.xlarge': [4, 1, 15728],
  'g4dn.2xlarge': [8, 1, 31456],
  'g4dn.4xlarge': [16, 1, 62912],
  'g4dn.8xlarge': [32, 1, 125824, 1],
  'g4dn.12xlarge': [48, 4, 188736, 1],
  'g4dn.16xlarge': [64, 1, 251648, 1],
  'g4dn.metal': [96, 8, 377472, 1],
  'g5.xlarge': [4, 1, 15728],
  'g5.2xlarge': [8, 1, 31456],
  'g5.4xlarge': [16, 1, 62912],
  'g5.8xlarge': [32, 1, 125824, 1],
  'g5.12xlarge': [48, 4, 188736, 1],
  'g5.16xlarge': [64, 1, 251648, 1],
  'g5.24xlarge': [96, 4, 377472, 1],
  'g5.48xlarge': [192, 8, 754944, 1],
  'g6e.xlarge': [4, 1, 31456],
  'g6e.2xlarge': [8, 1, 62912],
  'g6e.4xlarge': [16, 1, 125824],
  'g6e.8xlarge': [32, 1, 251648],
  'g6e.12xlarge': [48, 4, 377472],
  'g6e.16xlarge': [64, 1, 503296],
  'g6e.24xlarge': [96, 4, 754944, 2],
  'g6e.48xlarge': [192, 8, 1509888, 4],
  'trn1.2xlarge': [8, 0, 31456, 0, 1],
  'trn1.32xlarge': [128, 0, 503296, 8, 16],
  'inf2.xlarge': [4, 0, 15728, 0, 1],
  'inf2.8xlarge': [32, 0, 125824, 0, 1],
  'inf2.24xlarge': [96, 0, 377472, 0, 6],
  'inf2.48xlarge': [192, 0, 754944, 0, 12],
};

const GENERIC: Readonly<Record<string, Spec>> = {
  'gpu.small': [8, 1, 32768],
  'gpu.medium': [16, 2, 65536],
  'gpu.large': [32, 4, 131072],
  'gpu.xlarge': [64, 8, 262144],
  'cpu.nano': [1, 0, 512],
  'cpu.micro': [1, 0, 1024],
  'cpu.small': [1, 0, 2048],
  'cpu.medium': [2, 0, 4096],
  'cpu.large': [2, 0, 8192],
  'cpu.xlarge': [8, 0, 32768],
};

function awsResource(instanceType: string, [cpu, gpu, memMB, efa = 0, neuron = 0]: Spec): Resource {
  const devices: Record<string, number> = {};
  if (efa > 0) devices[EFA_DEVICE] = efa;
  if (neuron > 0) devices[NEURON_DEVICE] = neuron;
  return makeResource({
    cpu,
    gpu,
    memMB,
    capabilities: { [INSTANCE_TYPE_CAPABILITY]: instanceType },
    devices,
  });
}

const FACTORIES: ReadonlyMap<string, () => Resource> = new Map<string, () => Resource>([
  ...Object.entries(AWS).map(([type, spec]) => [`aws_${type}`, () => awsResource(type, spec)] as const),
  ...Object.entries(GENERIC).map(
    ([name, [cpu, gpu, memMB]]) => [name, () => makeResource({ cpu, gpu, memMB })] as const,
  ),
  ['NULL', () => makeResource(NULL_RESOURCE)],
  ['MISSING', () => makeResource(NULL_RESOURCE)],
]);

/** Every named resource, sorted. */
export function namedResourceNames(): string[] {
  return [...FACTORIES.keys()].sort();
}

/** True when `name` is a named resource. */
export function isNamedResource(name: string): boolean {
  return FACTORIES.has(name);
}

function similarity(a: string, b: string): number {
  const dp = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (dp[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = dp[i] as number[];
    const prev = dp[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
    }
  }
  const distance = (dp[a.length] as number[])[b.length] as number;
  return 1 - distance / Math.max(a.length, b.length, 1);
}

/**
 * Returns a fresh Resource for a named resource.
 *
 * @throws UnknownNamedResourceError with close matches when the name is unknown.
 * @example
 * ```ts
 * namedResource('aws_p4d.24xlarge'); // 96 cpu, 8 gpu, 1132416 MiB, 4 EFA devices, instance type p4d.24xlarge
 * ```
 */
export function namedResource(name: string, fieldPath = 'resource'): Resource {
  const factory = FACTORIES.get(name);
  if (factory) return factory();
  const suggestions = [...FACTORIES.keys()]
    .map((candidate) => [candidate, similarity(name.toLowerCase(), candidate.toLowerCase())] as const)
    .filter(([, score]) => score >= 0.6)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([candidate]) => candidate);
  throw new UnknownNamedResourceError(name, suggestions, fieldPath);
}
