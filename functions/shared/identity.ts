/**
 * Who is calling: the owner of the apps a request may see, derived from what API Gateway puts in the request
 * context of an IAM-authorized REST API (`requestContext.identity`), never from anything the caller chooses.
 *
 * | caller (`identity.userArn`) | owner |
 * |---|---|
 * | `arn:aws:sts::A:assumed-role/ROLE/SESSION` | `arn:aws:iam::A:role/ROLE`: every session of a role is one owner |
 * | same, ROLE matches a per-session owner role | `arn:aws:sts::A:assumed-role/ROLE/SESSION` |
 * | `arn:aws:iam::A:user/PATH/NAME` | `arn:aws:iam::A:user/NAME` |
 * | with `identity.cognitoIdentityId` (Cognito identity pool credentials) | `cognito-identity:<identity id>` |
 * | `arn:aws:iam::A:root`, `arn:aws:sts::A:federated-user/…`, anything else | refused (403 `Forbidden`) |
 * | not an ARN (local mode: the `X-Txs-User` header or the OS user) | the name as given |
 *
 * A session name is chosen by whoever calls AssumeRole, and changes with every credential rotation, so it is
 * the owner only for roles whose session names a trusted identity provider sets (IAM Identity Center sets
 * the user name for its `AWSReservedSSO_*` roles): a deployment opts in per role. Role and user ARNs lose
 * their IAM path (the request context does not carry it; names are unique in an account).
 *
 * @module
 */
import { HttpRequestError } from './http-errors.js';

/** The identity fields of an API Gateway REST request context that this module reads. */
export interface RequestIdentity {
  readonly userArn?: string | null;
  readonly cognitoIdentityId?: string | null;
}

/** How owners are derived, and who is an administrator. */
export interface IdentityConfig {
  /** Role names (a trailing `*` matches a prefix) whose sessions are separate owners. */
  readonly sessionOwnerRoles: readonly string[];
  /** Owners (in the canonical form {@link canonicalPrincipal} gives) that may act on every app. */
  readonly admins: ReadonlySet<string>;
}

/** The caller of one request. */
export interface Caller {
  /** The owner recorded on new apps and matched on every other verb. */
  readonly owner: string;
  /** May list, read, cancel and delete every owner's apps. */
  readonly admin: boolean;
}

const ARN = /^arn:(aws[a-z-]*):(iam|sts)::(\d{12}):(.+)$/;
const ROLE_NAME = /^[\w+=,.@-]{1,64}$/;
const SESSION_NAME = /^[\w+=,.@-]{2,64}$/;
const USER_NAME = /^[\w+=,.@-]{1,64}$/;

function forbidden(message: string): HttpRequestError {
  return new HttpRequestError('Forbidden', message);
}

/** Parsed principal: the owner, and the role it belongs to when it is a role session. */
interface Principal {
  readonly owner: string;
  readonly role?: string;
}

function parsePrincipal(arn: string, sessionOwnerRoles: readonly string[]): Principal {
  const match = ARN.exec(arn);
  if (!match) throw forbidden(`The caller ${arn} is not an IAM role or user; sign requests as one`);
  const [, partition, service, account, resource = ''] = match;
  const parts = resource.split('/');
  if (service === 'sts' && parts[0] === 'assumed-role' && parts.length === 3) {
    const [, roleName = '', session = ''] = parts;
    if (!ROLE_NAME.test(roleName) || !SESSION_NAME.test(session)) {
      throw forbidden(`The caller ${arn} is not a well-formed role session`);
    }
    const role = `arn:${partition}:iam::${account}:role/${roleName}`;
    const perSession = sessionOwnerRoles.some((pattern) =>
      pattern.endsWith('*') ? roleName.startsWith(pattern.slice(0, -1)) : roleName === pattern,
    );
    return perSession
      ? { owner: `arn:${partition}:sts::${account}:assumed-role/${roleName}/${session}`, role }
      : { owner: role, role };
  }
  if (service === 'iam' && parts[0] === 'user' && parts.length >= 2) {
    const name = parts[parts.length - 1] ?? '';
    if (!USER_NAME.test(name)) throw forbidden(`The caller ${arn} is not a well-formed IAM user`);
    return { owner: `arn:${partition}:iam::${account}:user/${name}` };
  }
  if (service === 'iam' && parts[0] === 'role' && parts.length >= 2) {
    // Only configuration names roles this way (the request context carries sessions).
    const name = parts[parts.length - 1] ?? '';
    if (!ROLE_NAME.test(name)) throw forbidden(`${arn} is not a well-formed IAM role`);
    return { owner: `arn:${partition}:iam::${account}:role/${name}` };
  }
  if (service === 'iam' && resource === 'root') {
    throw forbidden(
      "The account's root user may not use this API: sign requests with an IAM role (or IAM Identity Center) instead",
    );
  }
  if (service === 'sts' && parts[0] === 'federated-user') {
    throw forbidden(
      'Federation-token users may not use this API (their name is chosen by the caller): sign requests with an IAM role',
    );
  }
  throw forbidden(`The caller ${arn} is not an IAM role session or IAM user`);
}

/**
 * The canonical owner form of a configured principal: a role ARN (any IAM path), a user ARN, a role session
 * ARN, or a local name. Used for the admin list.
 *
 * @throws HttpRequestError (`Forbidden`) for a principal that can never be an owner (root, federated user).
 */
export function canonicalPrincipal(principal: string): string {
  return principal.startsWith('arn:') ? parsePrincipal(principal, ['*']).owner : principal;
}

/**
 * The caller of a request.
 *
 * @throws HttpRequestError `Unauthenticated` (401) when the request carries no identity; `Forbidden` (403) for
 *   a principal that may not use the API.
 * @example
 * ```ts
 * callerOf({ userArn: 'arn:aws:sts::123456789012:assumed-role/ml-team/alice-1700000000' }, config);
 * // { owner: 'arn:aws:iam::123456789012:role/ml-team', admin: false }
 * ```
 */
export function callerOf(identity: RequestIdentity | null | undefined, config: IdentityConfig): Caller {
  const userArn = identity?.userArn;
  if (typeof userArn !== 'string' || userArn === '') {
    throw new HttpRequestError(
      'Unauthenticated',
      'The request carries no caller identity; sign it with SigV4 (IAM auth)',
    );
  }
  if (!userArn.startsWith('arn:')) {
    // Local mode: the local server puts the X-Txs-User header (or the OS user) here.
    return { owner: userArn, admin: config.admins.has(userArn) };
  }
  const principal = parsePrincipal(userArn, config.sessionOwnerRoles);
  const cognito = identity?.cognitoIdentityId;
  if (typeof cognito === 'string' && cognito !== '') {
    // Every identity of a pool signs with the pool's role: being admin is per identity, never by that role.
    const owner = `cognito-identity:${cognito}`;
    return { owner, admin: config.admins.has(owner) };
  }
  const admin =
    config.admins.has(principal.owner) || (principal.role !== undefined && config.admins.has(principal.role));
  return { owner: principal.owner, admin };
}
