/**
 * A small evaluator of IAM identity policies, for proving what a synthesized role allows: request by
 * request, Allow or Deny, following the IAM User Guide's policy evaluation logic for one identity policy
 * (no SCPs, boundaries or resource policies):
 * - a request is allowed only when every resource it touches (e.g. SubmitJob's queue, definition and job)
 *   is allowed, and for services that authorize per container (AWS Batch's RegisterJobDefinition) every
 *   container's context too;
 * - for one resource and one context: an explicit Deny wins, else some Allow must match, else implicit deny;
 * - a statement matches when its Action (case-insensitive wildcards) and Resource (case-sensitive
 *   wildcards) match and every condition does: operators AND, keys in an operator AND, values OR; condition
 *   keys are case-insensitive; `…IfExists` matches a missing key; `Null` tests presence; `ForAllValues:`
 *   matches a missing key, `ForAnyValue:` does not; a negated operator matches a missing key.
 *
 * Only the operators the stack uses (String*, Bool, Arn*, Null and their IfExists and set forms) are
 * implemented; any other throws, so a new operator cannot pass unexamined.
 */

/** A condition block: operator → key → value(s). */
export type IamCondition = Record<string, Record<string, string | readonly string[]>>;

/** One statement of an identity policy. */
export interface IamStatement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | readonly string[];
  readonly NotAction?: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly NotResource?: string | readonly string[];
  readonly Condition?: IamCondition;
}

/** A request context: condition key → value; an absent key is not in the context. */
export type IamContext = Readonly<Record<string, string | readonly string[]>>;

/** One API call as IAM authorizes it. */
export interface IamRequest {
  readonly action: string;
  /** Every resource the call is authorized on (each must be allowed). */
  readonly resources: readonly string[];
  /** The request's keys (tags, PassedToService, …). */
  readonly context?: IamContext;
  /** Keys a service sets per container, each evaluated on its own with `context` (each must be allowed). */
  readonly containers?: readonly IamContext[];
}

const asList = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

function glob(pattern: string, flags: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, flags);
}

const BASE_OPERATORS: Record<string, { negated: boolean; test: (value: string, policy: string) => boolean }> =
  {
    StringEquals: { negated: false, test: (v, p) => v === p },
    StringNotEquals: { negated: true, test: (v, p) => v === p },
    StringEqualsIgnoreCase: { negated: false, test: (v, p) => v.toLowerCase() === p.toLowerCase() },
    StringLike: { negated: false, test: (v, p) => glob(p, '').test(v) },
    StringNotLike: { negated: true, test: (v, p) => glob(p, '').test(v) },
    Bool: { negated: false, test: (v, p) => v.toLowerCase() === p.toLowerCase() },
    ArnEquals: { negated: false, test: (v, p) => glob(p, '').test(v) },
    ArnLike: { negated: false, test: (v, p) => glob(p, '').test(v) },
    ArnNotLike: { negated: true, test: (v, p) => glob(p, '').test(v) },
  };

function lookup(context: IamContext, key: string): readonly string[] | undefined {
  const wanted = key.toLowerCase();
  for (const [name, value] of Object.entries(context)) {
    if (name.toLowerCase() === wanted) return asList(value);
  }
  return undefined;
}

function conditionMatches(
  operator: string,
  key: string,
  policyValues: readonly string[],
  context: IamContext,
) {
  const values = lookup(context, key);
  if (operator === 'Null') {
    if (policyValues.length !== 1) throw new Error(`Null takes one value, got ${policyValues.length}`);
    return (policyValues[0] === 'true') === (values === undefined);
  }
  const [qualifier, rest] = operator.includes(':') ? operator.split(':', 2) : [undefined, operator];
  const ifExists = (rest ?? '').endsWith('IfExists');
  const base = ifExists ? (rest ?? '').slice(0, -'IfExists'.length) : (rest ?? '');
  const spec = BASE_OPERATORS[base];
  if (
    spec === undefined ||
    (qualifier !== undefined && !['ForAllValues', 'ForAnyValue'].includes(qualifier))
  ) {
    throw new Error(`condition operator ${operator} is not implemented by this evaluator`);
  }
  if (values === undefined) {
    if (ifExists || qualifier === 'ForAllValues') return true;
    if (qualifier === 'ForAnyValue') return false;
    return spec.negated;
  }
  const one = (value: string) => {
    const any = policyValues.some((p) => spec.test(value, p));
    return spec.negated ? !any : any;
  };
  if (qualifier === 'ForAllValues') return values.every(one);
  if (qualifier === 'ForAnyValue') return values.some(one);
  if (values.length !== 1)
    throw new Error(`${key} has ${values.length} values; use ForAllValues/ForAnyValue`);
  return one(values[0] as string);
}

function statementMatches(statement: IamStatement, action: string, resource: string, context: IamContext) {
  const actionHit = (patterns: readonly string[]) => patterns.some((p) => glob(p, 'i').test(action));
  const resourceHit = (patterns: readonly string[]) => patterns.some((p) => glob(p, '').test(resource));
  if (statement.Action !== undefined && !actionHit(asList(statement.Action))) return false;
  if (statement.NotAction !== undefined && actionHit(asList(statement.NotAction))) return false;
  if (statement.Resource !== undefined && !resourceHit(asList(statement.Resource))) return false;
  if (statement.NotResource !== undefined && resourceHit(asList(statement.NotResource))) return false;
  return Object.entries(statement.Condition ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, value]) => conditionMatches(operator, key, asList(value), context)),
  );
}

/** The decision for one request: `Allow`, or why not. */
export type IamDecision = 'Allow' | 'ImplicitDeny' | 'ExplicitDeny';

/**
 * Evaluates `request` against `statements` (one identity policy).
 *
 * @example
 * ```ts
 * evaluate([{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }],
 *   { action: 's3:GetObject', resources: ['arn:aws:s3:::b/k'] }); // 'Allow'
 * ```
 */
export function evaluate(statements: readonly IamStatement[], request: IamRequest): IamDecision {
  if (request.resources.length === 0) throw new Error('a request needs at least one resource');
  const contexts =
    request.containers === undefined || request.containers.length === 0
      ? [request.context ?? {}]
      : request.containers.map((container) => ({ ...request.context, ...container }));
  let decision: IamDecision = 'Allow';
  for (const context of contexts) {
    for (const resource of request.resources) {
      const matching = statements.filter((s) => statementMatches(s, request.action, resource, context));
      if (matching.some((s) => s.Effect === 'Deny')) return 'ExplicitDeny';
      if (!matching.some((s) => s.Effect === 'Allow')) decision = 'ImplicitDeny';
    }
  }
  return decision;
}
