import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** An answer read in full. */
export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request to 127.0.0.1:`port` with full control of the headers (fetch does not let a caller set Host). */
export function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method, path, headers, setHost: false, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
