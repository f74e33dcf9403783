/**
 * The bounds of every input the API accepts (string and name lengths, list sizes, metadata depth, replicas,
 * the numbers DynamoDB stores): plain constants, so that code which checks a bound without parsing a body
 * (components, the Planner, the scheduler listing) loads no schema code.
 *
 * @module
 */

/** Longest string accepted in any field (args, env values, …). */
export const MAX_STRING_LENGTH = 65_536;
/** Longest name (app, role, image, entrypoint). */
export const MAX_NAME_LENGTH = 1_024;
/** Most items in any list (roles, args, mounts). */
export const MAX_LIST_ITEMS = 4_096;
/** Deepest nesting accepted in role metadata. */
export const MAX_METADATA_DEPTH = 8;
/**
 * Most replicas of one role, in an AppDef and in every component argument that makes replicas (`-j`,
 * `--num_replicas`): an app past it cannot be planned in bounded time or stored in one record.
 */
export const MAX_REPLICAS = 10_000;
/** Smallest magnitude of a non-zero number DynamoDB stores (its documented range). */
export const MIN_NUMBER_MAGNITUDE = 1e-130;
/** Every number DynamoDB stores has a magnitude below this. */
export const MAX_NUMBER_MAGNITUDE = 1e126;
