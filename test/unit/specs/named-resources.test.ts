import { describe, expect, it } from 'vitest';
import {
  EFA_DEVICE,
  INSTANCE_TYPE_CAPABILITY,
  NEURON_DEVICE,
  namedResource,
  namedResourceNames,
  UnknownNamedResourceError,
} from '../../../lib/specs/index.js';

describe('named resources', () => {
  it.each([
    ['aws_t3.medium', 2, 0, 3932, {}],
    ['aws_p4d.24xlarge', 96, 8, 1132416, { [EFA_DEVICE]: 4 }],
    ['aws_p5.48xlarge', 192, 8, 2013184, { [EFA_DEVICE]: 32 }],
    ['aws_g5.48xlarge', 192, 8, 754944, { [EFA_DEVICE]: 1 }],
    ['aws_g6e.48xlarge', 192, 8, 1509888, { [EFA_DEVICE]: 4 }],
    ['aws_trn1.32xlarge', 128, 0, 503296, { [EFA_DEVICE]: 8, [NEURON_DEVICE]: 16 }],
    ['aws_inf2.24xlarge', 96, 0, 377472, { [NEURON_DEVICE]: 6 }],
  ])('%s has TorchX numbers', (name, cpu, gpu, memMB, devices) => {
    const r = namedResource(name);
    expect(r).toEqual({
      cpu,
      gpu,
      memMB,
      devices,
      capabilities: { [INSTANCE_TYPE_CAPABILITY]: name.replace(/^aws_/, '') },
    });
  });

  it('has the generic sizes without capabilities', () => {
    expect(namedResource('gpu.small')).toEqual({
      cpu: 8,
      gpu: 1,
      memMB: 32768,
      capabilities: {},
      devices: {},
    });
    expect(namedResource('cpu.nano')).toEqual({ cpu: 1, gpu: 0, memMB: 512, capabilities: {}, devices: {} });
  });

  it('maps NULL and MISSING to the null resource', () => {
    expect(namedResource('NULL').cpu).toBe(-1);
    expect(namedResource('MISSING').memMB).toBe(-1);
  });

  it('returns a fresh object each time', () => {
    const a = namedResource('aws_p4d.24xlarge');
    a.devices[EFA_DEVICE] = 0;
    expect(namedResource('aws_p4d.24xlarge').devices[EFA_DEVICE]).toBe(4);
  });

  it('suggests close names for an unknown one', () => {
    expect(() => namedResource('aws_p4d.24xlarg')).toThrow(UnknownNamedResourceError);
    expect(() => namedResource('aws_p4d.24xlarg')).toThrow(/Did you mean: aws_p4d\.24xlarge/);
  });

  it('lists every AWS instance type of the reference table', () => {
    expect(namedResourceNames().filter((n) => n.startsWith('aws_'))).toHaveLength(40);
  });
});
