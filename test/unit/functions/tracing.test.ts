import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENV } from '../../../functions/shared/env-names.js';

/** The middleware names of the store's DynamoDB client after the container built it. */
async function dynamoMiddleware(): Promise<string[]> {
  const container = await import('../../../functions/shared/container.js');
  const names: string[] = [];
  container.configureClients((client) => {
    names.push(...client.middlewareStack.identify());
  });
  container.store();
  return names;
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('SDK call tracing', () => {
  it('puts an X-Ray subsegment middleware on every SDK client of a traced function in Lambda', async () => {
    vi.resetModules();
    vi.stubEnv(ENV.tableName, 'apps');
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'StateChange');
    vi.stubEnv('POWERTOOLS_TRACE_ENABLED', 'true');
    await import('../../../functions/shared/tracing.js');
    expect((await dynamoMiddleware()).join(' ')).toMatch(/XRay|xray/i);
  });

  it('leaves the clients of untraced functions (the API) as they are', async () => {
    vi.resetModules();
    vi.stubEnv(ENV.tableName, 'apps');
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs22.x');
    expect((await dynamoMiddleware()).join(' ')).not.toMatch(/XRay|xray/i);
  });
});
