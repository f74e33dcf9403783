/**
 * Who is on the other end of a loopback connection: Linux's socket tables parsed, and the verdict a server
 * bases its admission on (its own user, another user, or a platform that does not say).
 */
import { describe, expect, it } from 'vitest';
import {
  coalescedProcNetReader,
  decodeProcAddress,
  PeerUser,
  parseProcNetTcp,
  peerUid,
} from '../../../lib/loopback/peer-user.js';

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

describe('peer user: /proc/net/tcp parsing', () => {
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

describe('PeerUser', () => {
  const tcp = async () => [TCP, TCP6];
  const ends = (remotePort: number) => ({
    remoteAddress: '127.0.0.1',
    remotePort,
    localAddress: '127.0.0.1',
    localPort: 8080,
  });

  it('answers same for a connection of the server’s own uid, other for another user’s', async () => {
    expect(await new PeerUser({ uid: 1001, readProcNet: tcp }).of(ends(40000))).toBe('same');
    expect(await new PeerUser({ uid: 1000, readProcNet: tcp }).of(ends(40000))).toBe('other');
  });

  it('answers other, never same, for a connection the tables do not list or without addresses', async () => {
    const peer = new PeerUser({ uid: 1001, readProcNet: tcp });
    expect(await peer.of(ends(49999))).toBe('other');
    expect(await peer.of({})).toBe('other');
  });

  it('answers unknown where there are no socket tables (macOS, Windows)', async () => {
    const peer = new PeerUser({ uid: 1001, readProcNet: async () => ['', ''] });
    expect(await peer.of(ends(40000))).toBe('unknown');
  });

  it('reads the tables once per connection', async () => {
    let reads = 0;
    const peer = new PeerUser({
      uid: 1001,
      readProcNet: async () => {
        reads += 1;
        return [TCP];
      },
    });
    const socket = ends(40000);
    expect(await peer.of(socket)).toBe('same');
    expect(await peer.of(socket)).toBe('same');
    expect(reads).toBe(1);
  });
});
