/**
 * The two things tracing needs from Lambda's X-Ray set-up: which invocation is traced (the trace header Lambda
 * puts in `_X_AMZN_TRACE_ID` for each invocation: `Root=1-…;Parent=…;Sampled=1`) and where the X-Ray daemon
 * listens (`AWS_XRAY_DAEMON_ADDRESS`: `host:port`, or `udp:host:port tcp:host:port`). A segment document goes
 * to the daemon as one UDP datagram: the header line `{"format":"json","version":1}`, then the document's JSON.
 */
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';

/** The trace and the segment an invocation's subsegments belong to. */
export interface TraceParent {
  /** `Root` of the trace header, e.g. `1-5759e988-bd862e3fe1be46a994272793`. */
  traceId: string;
  /** `Parent` of the trace header: the id of the function's segment, 16 hex digits. */
  parentId: string;
}

/** The UDP address of the X-Ray daemon. */
export interface DaemonAddress {
  host: string;
  port: number;
}

/**
 * The trace to record into, from a trace header; undefined when there is none (outside Lambda) or the
 * invocation is not sampled (`Sampled=0`, or no decision).
 *
 * @example
 * ```ts
 * sampledTraceParent('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
 * // { traceId: '1-5759e988-bd862e3fe1be46a994272793', parentId: '53995c3f42cd8ad8' }
 * ```
 */
export function sampledTraceParent(header: string | undefined): TraceParent | undefined {
  if (header === undefined || header === '') return undefined;
  const fields = new Map<string, string>();
  for (const part of header.split(';')) {
    const equals = part.indexOf('=');
    if (equals > 0) fields.set(part.slice(0, equals).trim(), part.slice(equals + 1).trim());
  }
  const traceId = fields.get('Root');
  const parentId = fields.get('Parent');
  if (fields.get('Sampled') !== '1' || !traceId || !parentId) return undefined;
  return { traceId, parentId };
}

/**
 * The daemon's UDP address from `AWS_XRAY_DAEMON_ADDRESS`, or undefined when unset or malformed.
 *
 * @example
 * ```ts
 * daemonAddress('169.254.79.129:2000'); // { host: '169.254.79.129', port: 2000 }
 * daemonAddress('tcp:127.0.0.1:2000 udp:127.0.0.2:2001'); // { host: '127.0.0.2', port: 2001 }
 * ```
 */
export function daemonAddress(value: string | undefined): DaemonAddress | undefined {
  const parts = (value ?? '').trim().split(/\s+/);
  const udp =
    parts.length === 1 ? parts[0]?.replace(/^udp:/, '') : parts.find((p) => p.startsWith('udp:'))?.slice(4);
  if (udp === undefined) return undefined;
  const colon = udp.lastIndexOf(':');
  const host = udp.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  const port = Number(udp.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  return { host, port };
}

/**
 * The socket's address lookup: an IP literal (Lambda's daemon address is one) is used as it is, without a DNS
 * call and without loading Node's DNS module on the first traced call (~1–3 ms of a cold start); a host name
 * goes to `dns.lookup`, as dgram's default does.
 *
 * @example
 * ```ts
 * lookupAddress('169.254.79.129', 4, (error, address, family) => {}); // calls back at once: '169.254.79.129', 4
 * ```
 */
export function lookupAddress(
  host: string,
  options: number | { family?: number },
  callback: (error: Error | null, address: string, family: number) => void,
): void {
  const family = isIP(host);
  if (family !== 0) {
    callback(null, host, family);
    return;
  }
  const wanted = typeof options === 'number' ? options : (options.family ?? 0);
  import('node:dns').then(
    (dns) =>
      dns.lookup(host, { family: wanted }, (error, address, resolved) => callback(error, address, resolved)),
    (error: Error) => callback(error, '', 0),
  );
}

const DAEMON_HEADER = '{"format":"json","version":1}\n';
const sockets = new Map<'udp4' | 'udp6', Socket>();

/** One socket per address family for the process, which never keeps the process alive. */
function socketFor(host: string): Socket {
  const family = host.includes(':') ? 'udp6' : 'udp4';
  let socket = sockets.get(family);
  if (socket === undefined) {
    socket = createSocket({ type: family, lookup: lookupAddress as never });
    socket.on('error', () => undefined);
    socket.unref();
    sockets.set(family, socket);
  }
  return socket;
}

/**
 * Sends one segment document to the daemon. It resolves once the datagram is handed to the system (so a
 * subsegment is out before the invocation ends and Lambda freezes the process), at once for a daemon named
 * by a host name (no DNS wait on the call's path). It never rejects: a failure (no daemon, bad address, a
 * document that cannot be serialized) is dropped, so tracing can never fail the call it records.
 */
export function sendToDaemon(address: DaemonAddress, document: object): Promise<void> {
  return new Promise((resolve) => {
    try {
      const datagram = Buffer.from(DAEMON_HEADER + JSON.stringify(document));
      socketFor(address.host).send(datagram, address.port, address.host, () => resolve());
      if (isIP(address.host) === 0) resolve();
    } catch {
      resolve();
    }
  });
}
