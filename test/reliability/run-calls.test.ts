/**
 * The DynamoDB calls of a run through the deployed run handler (dynalite store, fake Batch): the store writes
 * what it knows. A run is one PutItem (the UNSUBMITTED record) and one UpdateItem (SUBMITTED, from the record
 * it just wrote); with an Idempotency-Key, the reservation adds one PutItem and its completion one UpdateItem,
 * and nothing is read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FunctionsEnvironment, startFunctionsEnvironment } from './helpers/environment.js';
import { invoke } from './helpers/lambda.js';
import { BATCH_RUN } from './helpers/requests.js';

let env: FunctionsEnvironment;
beforeAll(async () => {
  env = await startFunctionsEnvironment();
});
afterAll(() => env.close());

async function run(headers: Record<string, string> = {}) {
  return invoke(env.api.Run, { method: 'POST', resource: '/v1/apps', body: BATCH_RUN, headers });
}

describe('POST /v1/apps DynamoDB calls', () => {
  it('costs one PutItem and one UpdateItem without an Idempotency-Key', async () => {
    env.takeDynamoCalls();
    expect((await run()).statusCode).toBe(201);
    expect(env.takeDynamoCalls()).toEqual({ PutItemCommand: 1, UpdateItemCommand: 1 });
  });

  it('adds only the reservation and its completion with an Idempotency-Key, and reads nothing', async () => {
    env.takeDynamoCalls();
    expect((await run({ 'Idempotency-Key': 'calls-1' })).statusCode).toBe(201);
    expect(env.takeDynamoCalls()).toEqual({ PutItemCommand: 2, UpdateItemCommand: 2 });
  });
});
