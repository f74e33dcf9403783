/**
 * Unique name suffixes with TorchX's algorithm (`torchx.schedulers.ids`): a random unsigned 64-bit number
 * written in a consonant-first alphabet, 1–14 characters long.
 *
 * @module
 */
import { getRandomValues, randomInt } from 'node:crypto';

const FIRST_ALPHABET = 'bcdfghjklmnpqrstvwxz';
const REST_ALPHABET = 'bcdfghjklmnpqrstvwxz012345679';

/**
 * Encodes `value` (an unsigned 64-bit integer) the way TorchX's `random_id` does: the first character from a
 * 20-consonant alphabet, the rest from 29 characters (consonants and digits without `8`), least significant
 * first. `0` encodes to the empty string.
 *
 * @example
 * ```ts
 * encodeId(0x0123456789abcdefn); // 't4rcs9x6sv1m'
 * ```
 */
export function encodeId(value: bigint): string {
  return encodeIdHalves(Number((value >> 32n) & 0xffffffffn), Number(value & 0xffffffffn));
}

/**
 * {@link encodeId} of `high * 2^32 + low` in Number arithmetic (no BigInt division): each step divides the
 * 64-bit value, held as two 32-bit halves, by the alphabet size. Every intermediate stays below 2^37, so it
 * is exact.
 */
function encodeIdHalves(high: number, low: number): string {
  let hi = high;
  let lo = low;
  let out = '';
  while (hi > 0 || lo > 0) {
    const alphabet = out.length === 0 ? FIRST_ALPHABET : REST_ALPHABET;
    const size = alphabet.length;
    const carried = (hi % size) * 0x1_0000_0000 + lo;
    hi = Math.floor(hi / size);
    lo = Math.floor(carried / size);
    out += alphabet[carried % size];
  }
  return out;
}

/** A random id from 8 random bytes (TorchX `random_id`). */
export function randomId(): string {
  // One system call fills 128 ids (two 32-bit halves each, little-endian as the BigUint64 view would read
  // them); each is used once.
  if (poolNext >= pool.length) {
    getRandomValues(pool);
    poolNext = 0;
  }
  const low = pool[poolNext] ?? 0;
  const high = pool[poolNext + 1] ?? 0;
  pool[poolNext] = 0;
  pool[poolNext + 1] = 0;
  poolNext += 2;
  return encodeIdHalves(high, low);
}

const pool = new Uint32Array(256);
let poolNext = pool.length;

/**
 * `name-<random id>` (TorchX `make_unique`).
 *
 * @example
 * ```ts
 * makeUnique('train'); // e.g. 'train-t4rcs9x6sv1m'
 * ```
 */
export function makeUnique(name: string, id: string = randomId()): string {
  return `${name}-${id}`;
}

/**
 * A random id of exactly `length` characters (TorchX `get_len_random_id`): the first from the consonant
 * alphabet, the rest from the consonant-and-digit alphabet. Empty for `length` ≤ 0.
 *
 * @example
 * ```ts
 * randomIdOfLength(4); // e.g. 'k3x9'
 * ```
 */
export function randomIdOfLength(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    const alphabet = i === 0 ? FIRST_ALPHABET : REST_ALPHABET;
    out += alphabet[randomInt(alphabet.length)];
  }
  return out;
}
