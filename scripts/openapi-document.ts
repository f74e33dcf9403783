/**
 * The OpenAPI 3.1 document of the HTTP API v1, generated from the zod schemas that validate requests
 * (`lib/specs/schema.ts`; query parameters and headers: `functions/shared/queries.ts`) and describe responses
 * (`lib/specs/api.ts`), with one operation per route of `functions/routes.ts`. Committed as
 * `docs/openapi.json`, which `GET /v1/openapi.json` serves as is (`npm run openapi` regenerates it; a test
 * fails when it is stale).
 */
import * as z from 'zod/mini';
import { ROUTES } from '../functions/routes.js';
import { HEADERS, QUERIES } from '../functions/shared/queries.js';
import type { ParamsSchema } from '../functions/shared/query.js';
import {
  apiErrorSchema,
  appActionResponseSchema,
  appCountsResponseSchema,
  appResponseSchema,
  componentsResponseSchema,
  dryRunResponseSchema,
  listAppsResponseSchema,
  logPageResponseSchema,
  runRequestSchema,
  runResponseSchema,
  schedulersResponseSchema,
  workspaceOfferResponseSchema,
  workspaceOfferSchema,
} from '../lib/specs/index.js';

type JsonSchema = Record<string, unknown>;

/** A response header: name, JSON Schema, and what it says. */
type HeaderDoc = readonly [name: string, schema: JsonSchema, description: string];

interface Operation {
  readonly summary: string;
  readonly body?: z.ZodMiniType;
  readonly query?: ParamsSchema;
  readonly headers?: ParamsSchema;
  /** Headers of the success answer. */
  readonly responseHeaders?: readonly HeaderDoc[];
  readonly status: number;
  readonly response: z.ZodMiniType | 'openapi';
}

const str: JsonSchema = { type: 'string' };

/** Every operation, by route name. */
const OPERATIONS: Readonly<Record<string, Operation>> = {
  Schedulers: {
    summary: 'The schedulers and their run options',
    status: 200,
    response: schedulersResponseSchema,
  },
  Components: {
    summary: 'The builtin components and their arguments',
    status: 200,
    response: componentsResponseSchema,
  },
  Dryrun: {
    summary: 'What a run would submit, without submitting or recording anything',
    body: runRequestSchema,
    status: 200,
    response: dryRunResponseSchema,
  },
  Workspaces: {
    summary:
      'Whether the server holds a workspace archive for the caller, and if not, where to PUT it (a presigned S3 URL pinned to its length and checksum)',
    body: workspaceOfferSchema,
    status: 200,
    response: workspaceOfferResponseSchema,
  },
  Run: {
    summary: 'Record and submit an app',
    body: runRequestSchema,
    headers: HEADERS.Run,
    status: 201,
    response: runResponseSchema,
  },
  List: {
    summary: "The caller's apps, newest first",
    query: QUERIES.List,
    status: 200,
    response: listAppsResponseSchema,
  },
  Counts: {
    summary: "How many of the caller's apps are in each state (at most 10,000 records read)",
    query: QUERIES.Counts,
    status: 200,
    response: appCountsResponseSchema,
  },
  Status: {
    summary: "An app's record and status",
    query: QUERIES.Status,
    responseHeaders: [
      [
        'Long-Polled',
        { type: 'string', enum: ['true'] },
        'with waitFor: the server held the request until the record changed or waitSeconds passed, so ' +
          'the client may ask again at once; absent: poll at your own pace',
      ],
    ],
    status: 200,
    response: appResponseSchema,
  },
  Delete: {
    summary: 'Cancel an app if needed and delete its record',
    status: 202,
    response: appActionResponseSchema,
  },
  Cancel: { summary: 'Request cancellation of an app', status: 202, response: appActionResponseSchema },
  Logs: {
    summary: "One page of a replica's log lines",
    query: QUERIES.Logs,
    status: 200,
    response: logPageResponseSchema,
  },
  OpenApi: { summary: 'This document', status: 200, response: 'openapi' },
};

/** A zod schema as a JSON Schema (2020-12, the dialect of OpenAPI 3.1), without its `$schema` line. */
function jsonSchema(schema: z.ZodMiniType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return rest;
}

/** The OpenAPI parameters of a route's query or headers: each one's JSON Schema, its description beside it. */
function parametersOf(schema: ParamsSchema | undefined, where: 'query' | 'header'): JsonSchema[] {
  if (schema === undefined) return [];
  const properties = (jsonSchema(schema, 'input').properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(properties).map(([name, { description, ...param }]) => ({
    name,
    in: where,
    description,
    schema: param,
  }));
}

const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

/** Builds the OpenAPI 3.1 document. @throws Error when a route of ROUTES has no operation here. */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const op = OPERATIONS[route.name];
    if (op === undefined)
      throw new Error(`scripts/openapi-document.ts: no operation for route ${route.name}`);
    const parameters = [
      ...[...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: str,
      })),
      ...parametersOf(op.query, 'query'),
      ...parametersOf(op.headers, 'header'),
    ];
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = {
      operationId: route.name,
      summary: op.summary,
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(op.body === undefined
        ? {}
        : { requestBody: { required: true, content: json(jsonSchema(op.body, 'input')) } }),
      responses: {
        [String(op.status)]: {
          description: op.summary,
          ...(op.responseHeaders === undefined
            ? {}
            : {
                headers: Object.fromEntries(
                  op.responseHeaders.map(([name, schema, description]) => [name, { description, schema }]),
                ),
              }),
          content: json(
            op.response === 'openapi'
              ? { type: 'object' }
              : { $ref: `#/components/schemas/${route.name}Response` },
          ),
        },
        default: {
          description: 'An error: the code names it, the message says what to do, details name the fields',
          content: json({ $ref: '#/components/schemas/ApiError' }),
        },
      },
    };
  }
  const schemas: Record<string, JsonSchema> = { ApiError: jsonSchema(apiErrorSchema, 'output') };
  for (const route of ROUTES) {
    const response = OPERATIONS[route.name]?.response;
    if (response !== undefined && response !== 'openapi')
      schemas[`${route.name}Response`] = jsonSchema(response, 'output');
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'torchx-serverless',
      version: 'v1',
      description:
        'Run, watch and manage TorchX-style training jobs on AWS Batch and SageMaker. Every request is ' +
        'SigV4-signed for execute-api (IAM authorization) on the deployed API; local mode needs no signing.',
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    security: [{ sigv4: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        sigv4: {
          type: 'apiKey',
          name: 'Authorization',
          in: 'header',
          description: 'AWS Signature Version 4 for the execute-api service (IAM authorization)',
        },
      },
    },
  };
}
