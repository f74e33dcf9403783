import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { isLoopbackHostname, localTokenFile } from '../../../lib/cli/local-token.js';
import {
  checkHostAndOrigin,
  coalescedProcNetReader,
  decodeProcAddress,
  parseProcNetTcp,
  peerUid,
} from '../../../lib/local/access.js';

/** Two rows of /proc/net/tcp: a client (uid 1001) on 127.0.0.1:40000 talking to the server on 127.0.0.1:8080. */
const TCP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0000000000000000 100 0 0 10 0',
  '   1: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 2 1 0000000000000000 20 4 30 10 -1',
  '   2: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0000000000000000 20 4 30 10 -1',
].join('\n');

/** /proc/net/tcp6: a client on [::1]:40001 (uid 1002) and an IPv4-mapped client 127.0.0.1:40002 (uid 1003). */
const TCP6 = [
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 00000000000000000000000001000000:9C41 00000000000000000000000001000000:1F90 01 00000000:00000000 00:00000000 00000000  1002        0 4 1',
  '   1: 0000000000000000FFFF00000100007F:9C42 0000000000000000FFFF00000100007F:1F90 01 00000000:00000000 00:00000000 00000000  1003        0 5 1',
].join('\n');

function request(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

describe('local server access: /proc/net/tcp parsing', () => {
  it('decodes IPv4, IPv6 loopback and IPv4-mapped addresses as Node reports them', () => {
    expect(decodeProcAddress('0100007F:1F90')).toBe('127.0.0.1:8080');
    expect(decodeProcAddress('00000000000000000000000001000000:1F90')).toBe('::1:8080');
    expect(decodeProcAddress('0000000000000000FFFF00000100007F:9C42')).toBe('127.0.0.1:40002');
    expect(decodeProcAddress('garbage')).toBeUndefined();
  });

  it('parses every row with both ends and the owner uid, skipping the header', () => {
    expect(parseProcNetTcp(TCP)).toEqual([
      { local: '127.0.0.1:8080', remote: '0.0.0.0:0', uid: 1000 },
      { local: '127.0.0.1:40000', remote: '127.0.0.1:8080', uid: 1001 },
      { local: '127.0.0.1:8080', remote: '127.0.0.1:40000', uid: 1000 },
    ]);
  });

  it("finds the owner of the client's end of a connection, not the server's end", async () => {
    const read = async () => [TCP, TCP6];
    const server = { address: '127.0.0.1', port: 8080 };
    expect(await peerUid({ address: '127.0.0.1', port: 40000 }, server, read)).toBe(1001);
    expect(await peerUid({ address: '::1', port: 40001 }, { address: '::1', port: 8080 }, read)).toBe(1002);
    expect(await peerUid({ address: '::ffff:127.0.0.1', port: 40002 }, server, read)).toBe(1003);
    expect(await peerUid({ address: '127.0.0.1', port: 49999 }, server, read)).toBeUndefined();
  });

  it('reads only /proc/net/tcp for a plain IPv4 peer, both tables otherwise', async () => {
    const asked: (4 | undefined)[] = [];
    const read = async (family?: 4) => {
      asked.push(family);
      return family === 4 ? [TCP] : [TCP, TCP6];
    };
    const server = { address: '127.0.0.1', port: 8080 };
    expect(await peerUid({ address: '127.0.0.1', port: 40000 }, server, read)).toBe(1001);
    expect(await peerUid({ address: '::ffff:127.0.0.1', port: 40002 }, server, read)).toBe(1003);
    expect(asked).toEqual([4, undefined]);
  });

  it('shares one read between lookups that asked before it started, never one already under way', async () => {
    const reads: { resolve: (tables: string[]) => void }[] = [];
    const read = coalescedProcNetReader(
      () => new Promise<string[]>((resolve) => reads.push({ resolve: (t) => resolve(t) })),
    );
    const first = read(4);
    const second = read(4);
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(1);
    // Asked while the first read is under way: waits for a read of its own, shared with later askers.
    const third = read(4);
    const fourth = read(4);
    reads[0]?.resolve(['first']);
    expect(await first).toEqual(['first']);
    expect(await second).toEqual(['first']);
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(2);
    reads[1]?.resolve(['second']);
    expect(await third).toEqual(['second']);
    expect(await fourth).toEqual(['second']);
  });
});

describe('local server access: Host and Origin', () => {
  it.each([
    ['127.0.0.1:8080', undefined],
    ['localhost:8080', undefined],
    ['[::1]:8080', undefined],
    ['127.1.2.3:8080', undefined],
    ['LOCALHOST:8080', undefined],
  ])('admits Host %s', (host) => {
    expect(checkHostAndOrigin(request({ host }), 8080)).toBeUndefined();
  });

  it.each([
    ['attacker.example:8080'],
    ['127.0.0.1.attacker.example:8080'],
    ['127.0.0.1:9090'],
    ['127.0.0.1'],
    ['localhost.:8080'],
    ['user@127.0.0.1:8080'],
    [''],
  ])('refuses Host %j with 403 naming the Host', (host) => {
    const refusal = checkHostAndOrigin(request({ host }), 8080);
    expect(refusal).toMatchObject({ statusCode: 403, code: 'Forbidden' });
    expect(refusal?.message).toContain(`Host ${JSON.stringify(host)}`);
  });

  it('refuses a request without Host', () => {
    expect(checkHostAndOrigin(request({}), 8080)?.statusCode).toBe(403);
  });

  it.each([
    ['https://attacker.example'],
    ['http://127.0.0.1:9090'],
    ['null'],
    ['http://127.0.0.1:8080/path'],
  ])('refuses Origin %s', (origin) => {
    const refusal = checkHostAndOrigin(request({ host: '127.0.0.1:8080', origin }), 8080);
    expect(refusal).toMatchObject({ statusCode: 403, code: 'Forbidden' });
    expect(refusal?.message).toContain('Origin');
  });

  it('admits its own origin, and refuses what a browser marks cross-site', () => {
    expect(
      checkHostAndOrigin(request({ host: 'localhost:8080', origin: 'http://localhost:8080' }), 8080),
    ).toBeUndefined();
    expect(
      checkHostAndOrigin(request({ host: 'localhost:8080', 'sec-fetch-site': 'cross-site' }), 8080)
        ?.statusCode,
    ).toBe(403);
    expect(
      checkHostAndOrigin(request({ host: 'localhost:8080', 'sec-fetch-site': 'none' }), 8080),
    ).toBeUndefined();
  });
});

describe('local server token file location', () => {
  it('is ~/.txs/local/<port>.token unless TXS_LOCAL_TOKEN_FILE says otherwise', () => {
    expect(localTokenFile(8080, {}, '/home/me')).toBe('/home/me/.txs/local/8080.token');
    expect(localTokenFile(8080, { TXS_LOCAL_TOKEN_FILE: '/run/t' }, '/home/me')).toBe('/run/t');
  });

  it('counts only loopback names as local', () => {
    expect(['localhost', '127.0.0.1', '[::1]', '127.255.0.9'].every(isLoopbackHostname)).toBe(true);
    expect(['10.0.0.1', 'example.com', '127.0.0.1.nip.io', '1270.0.0.1'].some(isLoopbackHostname)).toBe(
      false,
    );
  });
});
