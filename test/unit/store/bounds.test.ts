import { describe, expect, it } from 'vitest';
import { type AppRecord, makeAppDef } from '../../../lib/specs/index.js';
import {
  boundRecord,
  ELIDED,
  MAX_REPLICA_TEXT_BYTES,
  truncateErrorDocument,
  truncateText,
} from '../../../lib/store/index.js';

describe('truncateText', () => {
  it('keeps text that fits and cuts longer text to the byte limit with a marker giving the full size', () => {
    expect(truncateText('short', 100)).toBe('short');
    const cut = truncateText('a'.repeat(5000), 100);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(100);
    expect(cut).toMatch(/^a+ … \[truncated: 5000 bytes\]$/);
  });

  it('never splits a multi-byte character', () => {
    const cut = truncateText('é'.repeat(1000), 101);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(101);
    expect(cut).not.toContain('\uFFFD');
    expect(cut.startsWith('éé')).toBe(true);
  });
});

describe('truncateErrorDocument', () => {
  it('turns an oversized error document into a small JSON document that says it was cut', () => {
    const doc = JSON.stringify({ message: { message: 'boom', extraInfo: { trace: '"\\n'.repeat(10_000) } } });
    const cut = truncateErrorDocument(doc, MAX_REPLICA_TEXT_BYTES);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_REPLICA_TEXT_BYTES);
    expect(JSON.parse(cut)).toMatchObject({ truncated: true, bytes: Buffer.byteLength(doc) });
  });
});

describe('boundRecord', () => {
  const record: AppRecord = {
    handle: 'fake://torchx/q:a',
    scheduler: 'fake',
    session: 'torchx',
    appId: 'q:a',
    nativeName: 'a',
    owner: 'alice',
    name: 'a',
    app: makeAppDef({ name: 'a' }),
    cfg: {},
    state: 'FAILED' as const,
    numRestarts: 0,
    roles: [
      {
        role: 'r',
        replicas: Array.from({ length: 40 }, (_, id) => ({
          id,
          state: 'FAILED' as const,
          role: 'r',
          hostname: 'h',
          structuredErrorMsg: 'e'.repeat(1500),
        })),
      },
    ],
    attempt: 0,
    lastEventTime: 0,
    createdAt: 0,
    updatedAt: 0,
    history: [],
  };
  const size = (r: AppRecord) => JSON.stringify(r).length;

  it('drops the error text of replicas after the first 16 when the record is too large, then of all', () => {
    const stage2 = boundRecord(record, size, size(record) - 1000);
    const texts = stage2.roles[0]?.replicas.map((r) => r.structuredErrorMsg) ?? [];
    expect(texts.slice(0, 16).every((t) => t.length === 1500)).toBe(true);
    expect(texts.slice(16)).toEqual(Array(24).fill(ELIDED));
    const stage3 = boundRecord(record, size, 8000);
    expect(stage3.roles[0]?.replicas.every((r) => r.structuredErrorMsg === ELIDED)).toBe(true);
    expect(record.roles[0]?.replicas[39]?.structuredErrorMsg).toHaveLength(1500);
  });
});
