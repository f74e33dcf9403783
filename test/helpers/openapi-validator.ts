/**
 * Checks API responses against the published contract (docs/openapi.json): every JSON response of the
 * local server must match the schema of its operation and status (or the error schema). The e2e tests send
 * their requests through {@link validateResponses} (the global `fetch`, or the CLI's transport) so that every
 * response they receive is checked.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, expect } from 'vitest';
import { type HttpTransport, nodeHttpTransport } from '../../lib/cli/http-transport.js';

interface OpenApiDocument {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content: Record<string, { schema: object }> }> }>
  >;
  components: { schemas: Record<string, object> };
}

const DOCUMENT: OpenApiDocument = JSON.parse(
  readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'),
);

const ajv = new Ajv2020({ allErrors: true, strict: false });
ajv.addSchema({ $id: 'openapi', components: DOCUMENT.components });
const compiled = new Map<string, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate === undefined) {
    // `#/components/schemas/X` references resolve inside the document registered as `openapi`.
    const resolved = JSON.parse(key.replaceAll('"#/components/', '"openapi#/components/'));
    validate = ajv.compile(resolved);
    compiled.set(key, validate);
  }
  return validate;
}

const TEMPLATES = Object.keys(DOCUMENT.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
}));

/**
 * The problems of one response against the contract (empty when it conforms). A path the document does not
 * know must answer with the error schema.
 */
export function contractProblems(method: string, pathname: string, status: number, body: unknown): string[] {
  const template = TEMPLATES.find((t) => t.pattern.test(pathname))?.template;
  const operation = template === undefined ? undefined : DOCUMENT.paths[template]?.[method.toLowerCase()];
  const response = operation?.responses[String(status)] ?? operation?.responses.default;
  const schema = response?.content['application/json']?.schema ?? { $ref: '#/components/schemas/ApiError' };
  const validate = validatorFor(schema);
  if (validate(body)) return [];
  return (validate.errors ?? []).map(
    (e) =>
      `${method} ${pathname} → ${status}: ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`,
  );
}

/**
 * Checks every JSON response from `origin()` (a base URL; a path in it, such as an API Gateway stage, is the
 * prefix of the API's paths) against the contract, and fails the test file (in afterAll)
 * when any did not conform or none was checked: responses to the global `fetch` (wrapped here), and those of
 * the returned `transport`, which a CLI test gives `txs` in its `CliIO`.
 */
export function validateResponses(origin: () => string | undefined): { transport: HttpTransport } {
  const original = globalThis.fetch;
  const problems: string[] = [];
  let checked = 0;
  const check = (method: string, url: URL, status: number, contentType: string, bodyText: string) => {
    const base = origin();
    if (base === undefined || url.origin !== new URL(base).origin) return;
    // A base URL with a path (an API Gateway stage, `…/prod`) serves the API's paths under it.
    const stage = new URL(base).pathname.replace(/\/+$/, '');
    if (!url.pathname.startsWith(`${stage}/`)) return;
    if (!contentType.includes('application/json')) return;
    problems.push(
      ...contractProblems(method, url.pathname.slice(stage.length), status, JSON.parse(bodyText)),
    );
    checked++;
  };
  globalThis.fetch = async (input, init) => {
    const response = await original(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.includes('application/json')) {
      check(method, url, response.status, contentType, await response.clone().text());
    }
    return response;
  };
  const transport: HttpTransport = async (exchange) => {
    const answer = await nodeHttpTransport(exchange);
    check(exchange.method, exchange.url, answer.status, answer.header('content-type') ?? '', answer.text);
    return answer;
  };
  afterAll(() => {
    globalThis.fetch = original;
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
  return { transport };
}
