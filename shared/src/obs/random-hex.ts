// Random ids in hex from a pool of crypto-random bytes refilled 4 KiB at a
// time: one randomFillSync per ~170 trace ids instead of two per id (the
// per-call cost was 3 % of a busy operator's CPU in the bench's profile).
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4_096;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** `bytes` random bytes (at most 4 KiB), as lowercase hex. */
export function randomHex(bytes: number): string {
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}
