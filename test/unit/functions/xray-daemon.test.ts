import { describe, expect, it } from 'vitest';
import { daemonAddress, lookupAddress, sampledTraceParent } from '../../../functions/shared/xray-daemon.js';

const ROOT = '1-5759e988-bd862e3fe1be46a994272793';

describe('sampledTraceParent', () => {
  it('reads Root and Parent of a sampled trace header, whatever else it carries', () => {
    expect(sampledTraceParent(`Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=1;Lineage=a87bd80c:0`)).toEqual({
      traceId: ROOT,
      parentId: '53995c3f42cd8ad8',
    });
  });

  it.each([
    ['not sampled', `Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=0`],
    ['no sampling decision', `Root=${ROOT};Parent=53995c3f42cd8ad8;Sampled=?`],
    ['no parent', `Root=${ROOT};Sampled=1`],
    ['no root', 'Parent=53995c3f42cd8ad8;Sampled=1'],
    ['empty', ''],
    ['absent (outside Lambda)', undefined],
  ])('gives no trace to record into when the header is %s', (_case, header) => {
    expect(sampledTraceParent(header)).toBeUndefined();
  });
});

describe('daemonAddress', () => {
  it.each([
    ['169.254.79.129:2000', { host: '169.254.79.129', port: 2000 }],
    ['udp:127.0.0.1:3000', { host: '127.0.0.1', port: 3000 }],
    ['tcp:127.0.0.1:2000 udp:127.0.0.2:2001', { host: '127.0.0.2', port: 2001 }],
    ['[::1]:2000', { host: '::1', port: 2000 }],
  ])('reads the UDP address of %s', (value, address) => {
    expect(daemonAddress(value)).toEqual(address);
  });

  it.each([undefined, '', 'localhost', ':2000', 'host:0', 'host:70000', 'tcp:127.0.0.1:2000 tcp:x:1'])(
    'gives no address for %s',
    (value) => {
      expect(daemonAddress(value)).toBeUndefined();
    },
  );
});

describe('lookupAddress (the daemon socket’s lookup)', () => {
  it('uses an IP literal as it is, synchronously: no DNS on the first traced call', () => {
    const answers: unknown[] = [];
    lookupAddress('169.254.79.129', 4, (...answer) => answers.push(answer));
    lookupAddress('::1', { family: 6 }, (...answer) => answers.push(answer));
    expect(answers).toEqual([
      [null, '169.254.79.129', 4],
      [null, '::1', 6],
    ]);
  });

  it('resolves a host name through DNS, as dgram would', async () => {
    const answer = await new Promise<unknown[]>((resolve) =>
      lookupAddress('localhost', 4, (...result) => resolve(result)),
    );
    expect(answer).toEqual([null, '127.0.0.1', 4]);
  });
});
