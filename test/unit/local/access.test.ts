import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { checkHostAndOrigin } from '../../../lib/local/access.js';
import { isLoopbackHostname, localTokenFile } from '../../../lib/loopback/local-token.js';

function request(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

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
