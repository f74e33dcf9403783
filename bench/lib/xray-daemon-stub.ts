/**
 * A loopback stand-in for the X-Ray daemon (UDP): counts the segment documents it receives, so the cold-init
 * bench measures the functions with tracing on (a sampled invocation, as Lambda's active tracing gives one)
 * and shows how many SDK calls each first invocation traced.
 */
import { createSocket } from 'node:dgram';
import { once } from 'node:events';

/** A listening daemon stub. */
export interface XrayDaemonStub {
  /** `host:port`, the form of `AWS_XRAY_DAEMON_ADDRESS`. */
  address: string;
  /** The documents received so far (the JSON after the `{"format":"json","version":1}` header line). */
  documents: Record<string, unknown>[];
  close(): Promise<void>;
}

/** Starts a UDP socket on 127.0.0.1 that keeps every segment document it receives. */
export async function startXrayDaemonStub(): Promise<XrayDaemonStub> {
  const socket = createSocket('udp4');
  const documents: Record<string, unknown>[] = [];
  socket.on('message', (message) => {
    const text = message.toString('utf8');
    const body = text.slice(text.indexOf('\n') + 1);
    try {
      documents.push(JSON.parse(body) as Record<string, unknown>);
    } catch {
      documents.push({ unparsed: text });
    }
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    address: `127.0.0.1:${socket.address().port}`,
    documents,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
}
