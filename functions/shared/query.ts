/**
 * Query parameters (and request headers) as zod schemas: one object schema per route (`queries.ts`) both
 * parses the request, with errors that name the parameter, and writes the route's parameters in the OpenAPI
 * document (`scripts/openapi-document.ts`). Each builder puts the bounds, pattern and description in the
 * schema once.
 */
import * as z from 'zod/mini';
import { ValidationError } from '../../lib/specs/index.js';

/** One route's parameters: name → schema of its value (optional: an absent or empty parameter is left out). */
export type ParamsSchema = z.ZodMiniObject<Record<string, z.ZodMiniOptional<z.ZodMiniType>>>;

/** `schema` with its description (the OpenAPI parameter's), as an optional parameter. */
function param<T extends z.ZodMiniType>(schema: T, description: string): z.ZodMiniOptional<T> {
  z.globalRegistry.add(schema, { description });
  return z.optional(schema);
}

/** An integer in `[min, max]` (given as decimal digits). */
export function intParam(min: number, max: number, description: string) {
  const outside = (iss: { input?: unknown }) => `must be between ${min} and ${max}, got ${iss.input}`;
  return param(
    z
      .int({ error: (iss) => `must be an integer between ${min} and ${max}, got '${iss.input}'` })
      .check(z.minimum(min, { error: outside }), z.maximum(max, { error: outside })),
    description,
  );
}

/** A time given as ISO-8601 or epoch milliseconds, parsed to a Date. */
export function timeParam(description: string) {
  const error = (iss: { input?: unknown }) =>
    `must be an ISO-8601 time (2026-11-22T10:00:00Z) or epoch milliseconds, got '${iss.input}'`;
  return param(
    z.pipe(
      z.string(),
      z.transform((raw: string, ctx) => {
        const date = /^\d+$/.test(raw) ? new Date(Number(raw)) : new Date(raw);
        if (Number.isNaN(date.getTime()))
          ctx.issues.push({ code: 'custom', input: raw, message: error({ input: raw }) });
        return date;
      }),
    ),
    `${description} (ISO-8601 or epoch milliseconds)`,
  );
}

/** A flag: `true`/`1` or `false`/`0`. */
export function flagParam(description: string) {
  return param(
    z.pipe(
      z.enum(['true', 'false', '1', '0'], { error: (iss) => `must be true or false, got '${iss.input}'` }),
      z.transform((raw) => raw === 'true' || raw === '1'),
    ),
    description,
  );
}

/** Text matching `pattern`; `rule` says what it must be (given the text, at most 64 characters of it). */
export function patternParam(pattern: RegExp, rule: (raw: string) => string, description: string) {
  return param(
    z.string().check(z.regex(pattern, { error: (iss) => rule(String(iss.input).slice(0, 64)) })),
    description,
  );
}

/** One of `values`. */
export function enumParam<const T extends readonly [string, ...string[]]>(values: T, description: string) {
  return param(
    z.enum(values, { error: (iss) => `must be one of ${values.join(', ')}, got '${iss.input}'` }),
    description,
  );
}

/** Any text. */
export function textParam(description: string) {
  return param(z.string(), description);
}

/**
 * The parameters of `schema`, read by name with `read` (a query parameter, a header), parsed. An empty
 * query parameter counts as absent; an empty header (`keepEmpty`) is checked like any other value.
 *
 * @throws ValidationError naming the first parameter that is not valid, and what it must be.
 */
export function parseParams<S extends ParamsSchema>(
  schema: S,
  read: (name: string) => string | undefined,
  { keepEmpty = false } = {},
): z.output<S> {
  const raw: Record<string, string | number> = {};
  for (const [name, member] of Object.entries(schema.shape)) {
    const text = read(name);
    if (text === undefined || (text === '' && !keepEmpty)) continue;
    // An integer parameter is given as text: its digits are the number (anything else fails its schema).
    const isInt = member._zod.def.innerType._zod.def.type === 'number';
    raw[name] = isInt && /^\d+$/.test(text) ? Number(text) : text;
  }
  const result = z.safeParse(schema, raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw ValidationError.forField(String(issue?.path[0] ?? ''), issue?.message ?? 'is not valid');
}
