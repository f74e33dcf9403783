import { describe, expect, it } from 'vitest';
import { applyMacros, macros, makeRole, safeSubstitute } from '../../../lib/specs/index.js';

describe('safeSubstitute', () => {
  it('substitutes braced and bare known names', () => {
    expect(safeSubstitute('--id ${app_id} --r $replica_id', { app_id: 'a1', replica_id: '3' })).toBe(
      '--id a1 --r 3',
    );
  });

  it('keeps unknown ${x} and bare $HOME as they are', () => {
    expect(safeSubstitute('${unknown} $HOME ${app_id}', { app_id: 'x' })).toBe('${unknown} $HOME x');
  });

  it('turns $$ into a literal $ so $${app_id} stays a literal placeholder', () => {
    expect(safeSubstitute('cost $$5 $${app_id}', { app_id: 'x' })).toBe('cost $5 ${app_id}');
  });

  it('resolves $${${rank0_env}:=localhost} to ${<value>:=localhost}', () => {
    expect(safeSubstitute('$${${rank0_env}:=localhost}:29500', { rank0_env: 'MAIN_ADDR' })).toBe(
      '${MAIN_ADDR:=localhost}:29500',
    );
  });

  it('does not rescan substituted values', () => {
    expect(safeSubstitute('${app_id}', { app_id: '${replica_id}', replica_id: '9' })).toBe('${replica_id}');
  });

  it('leaves a lone trailing $ alone', () => {
    expect(safeSubstitute('price$', {})).toBe('price$');
  });

  it('keeps a $ that starts no placeholder: ${ without a name and }, a digit, a dash', () => {
    const mapping = { app_id: 'x' };
    expect(safeSubstitute('${ ${app_id ${1} $1 $-x ${a-b}', mapping)).toBe('${ ${app_id ${1} $1 $-x ${a-b}');
    expect(safeSubstitute('$${app_id}${app_id}$app_id$', mapping)).toBe('${app_id}xx$');
  });

  it('takes ASCII names only, case-insensitively, up to the first other character', () => {
    expect(safeSubstitute('$App_1.x ${_z}é $éx', { App_1: 'A', _z: 'Z' })).toBe('A.x Zé $éx');
  });

  it("ignores names the mapping only inherits (such as Object's toString)", () => {
    expect(safeSubstitute('${toString} $constructor', {})).toBe('${toString} $constructor');
  });
});

describe('applyMacros', () => {
  const role = makeRole({
    name: 'trainer',
    image: '${img_root}/img',
    entrypoint: '${app_id}',
    args: ['--out', macros.imgRoot, '--id', macros.appId, '--rank', macros.replicaId],
    env: { ADDR: macros.rank0Env, '${app_id}': 'k' },
    metadata: { nested: { list: ['${app_id}', 3] }, plain: '${base_img_root}' },
  });
  const values = { imgRoot: '/root', appId: 'job-1', replicaId: '$NODE', rank0Env: 'MASTER' };

  it('substitutes args, env values and string metadata on a copy', () => {
    const out = applyMacros(role, values);
    expect(out.args).toEqual(['--out', '/root', '--id', 'job-1', '--rank', '$NODE']);
    expect(out.env).toEqual({ ADDR: 'MASTER', '${app_id}': 'k' });
    expect(out.metadata).toEqual({ nested: { list: ['job-1', 3] }, plain: 'DEPRECATED' });
  });

  it('leaves image, entrypoint and name alone and does not modify the input role', () => {
    const out = applyMacros(role, values);
    expect(out.image).toBe('${img_root}/img');
    expect(out.entrypoint).toBe('${app_id}');
    expect(role.args[3]).toBe('${app_id}');
  });
});
