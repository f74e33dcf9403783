import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../lib/specs/index.js';

describe('canonicalJson', () => {
  it('writes the same text for the same content, whatever order its keys were set in', () => {
    const a = { b: 1, a: { y: [true, 'x'], x: null } };
    const b = { a: { x: null, y: [true, 'x'] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"x":null,"y":[true,"x"]},"b":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it('sorts keys by UTF-16 code units, integer-like keys too (unlike an object, which lists them first)', () => {
    expect(canonicalJson({ 10: 'ten', 2: 'two', b: 'bee', A: 'upper', _: 'under' })).toBe(
      '{"10":"ten","2":"two","A":"upper","_":"under","b":"bee"}',
    );
  });

  it('leaves members holding undefined out and writes undefined array items as null, as JSON.stringify', () => {
    const value = { kept: [undefined, 1], gone: undefined, nested: { gone: undefined } };
    expect(canonicalJson(value)).toBe('{"kept":[null,1],"nested":{}}');
    expect(canonicalJson(value)).toBe(JSON.stringify({ kept: [null, 1], nested: {} }));
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('writes strings and numbers as JSON.stringify does: escapes, lone surrogates, exponents, non-finite', () => {
    const value = ['quote"d', 'back\\slash', 'ctl\u0001\t\n', 'a\ud800b', '😀 é', -1.5e-7, 1e21, Number.NaN];
    expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });
});
