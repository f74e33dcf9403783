import { describe, expect, it } from 'vitest';
import { batchedLines } from '../../../lib/local/console-lines.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('batchedLines', () => {
  it('writes the lines of one event-loop turn in one write, in order', async () => {
    const writes: string[] = [];
    const log = batchedLines({ write: (text: string) => writes.push(text) });
    log('GET /v1/apps -> 200');
    log('GET /v1/apps/local_cwd/a -> 200');
    expect(writes).toEqual([]);
    await turn();
    log('POST /v1/apps -> 201');
    await turn();
    expect(writes).toEqual([
      'GET /v1/apps -> 200\nGET /v1/apps/local_cwd/a -> 200\n',
      'POST /v1/apps -> 201\n',
    ]);
  });

  it('writes what is pending at once on flush, and nothing twice', async () => {
    const writes: string[] = [];
    const log = batchedLines({ write: (text: string) => writes.push(text) });
    log('a -> RUNNING');
    log.flush();
    expect(writes).toEqual(['a -> RUNNING\n']);
    await turn();
    log.flush();
    expect(writes).toEqual(['a -> RUNNING\n']);
  });
});
