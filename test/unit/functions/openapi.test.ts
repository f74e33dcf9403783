import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { handler } from '../../../functions/api/openapi.js';
import { ROUTES } from '../../../functions/routes.js';
import { buildOpenApiDocument } from '../../../scripts/openapi-document.js';
import { contractProblems } from '../../helpers/openapi-validator.js';

const COMMITTED = readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8');

describe('the OpenAPI document', () => {
  it('is committed as docs/openapi.json exactly as generated from the schemas (npm run openapi)', () => {
    expect(COMMITTED).toBe(`${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
  });

  it('has one operation per route of functions/routes.ts, with a response schema and the error schema', () => {
    const doc = buildOpenApiDocument() as {
      openapi: string;
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`),
    );
    expect(operations.sort()).toEqual(ROUTES.map((r) => `${r.method} ${r.path} ${r.name}`).sort());
    for (const methods of Object.values(doc.paths))
      for (const op of Object.values(methods)) expect(Object.keys(op.responses)).toContain('default');
  });

  it('describes the request body with the schema that validates it (limits included)', () => {
    interface Schema {
      additionalProperties?: boolean;
      pattern?: string;
      minItems?: number;
      properties: Record<string, Schema>;
    }
    const doc = buildOpenApiDocument() as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>
      >;
    };
    const schema = doc.paths['/v1/apps']?.post?.requestBody?.content['application/json']?.schema;
    if (schema === undefined) throw new Error('POST /v1/apps has no request body schema');
    expect(schema.properties.session?.pattern).toBe('^[A-Za-z0-9_.-]{0,64}$');
    expect(schema.properties.app?.properties.roles?.minItems).toBe(1);
    expect(schema.additionalProperties).toBe(false);
  });

  it('is served at GET /v1/openapi.json', async () => {
    const result = await handler(
      {
        httpMethod: 'GET',
        path: '/v1/openapi.json',
        headers: {},
        requestContext: { requestId: 'r1', identity: { userArn: 'arn:aws:iam::123456789012:user/u' } },
      } as never,
      { awsRequestId: 'r1', functionName: 'OpenApi' } as never,
    );
    expect(result.statusCode).toBe(200);
    expect(`${JSON.stringify(JSON.parse(result.body), null, 2)}\n`).toBe(COMMITTED);
  });
});

describe('contractProblems (the e2e tests’ response check)', () => {
  const created = {
    handle: 'local_cwd://torchx/a1',
    scheduler: 'local_cwd',
    session: 'torchx',
    appId: 'a1',
    state: 'SUBMITTED',
  };

  it('accepts a response that matches its operation and status', () => {
    expect(contractProblems('POST', '/v1/apps', 201, created)).toEqual([]);
  });

  it('rejects a missing field, an unknown state and an undocumented field', () => {
    const { handle: _, ...noHandle } = created;
    expect(contractProblems('POST', '/v1/apps', 201, noHandle).join()).toContain('handle');
    expect(contractProblems('POST', '/v1/apps', 201, { ...created, state: 'DONE' }).join()).toContain(
      '/state',
    );
    expect(contractProblems('POST', '/v1/apps', 201, { ...created, extra: 1 }).join()).toContain('extra');
  });

  it('checks errors (any status without its own schema) against the error schema', () => {
    expect(
      contractProblems('GET', '/v1/apps/local_cwd/x', 404, { error: { code: 'UnknownApp', message: 'm' } }),
    ).toEqual([]);
    expect(contractProblems('GET', '/v1/nowhere', 404, { message: 'not found' })).not.toEqual([]);
  });
});
