// Start-up writes (the API-domain marker, shared secrets, built-in
// namespaces) are create-if-absent, so repeating one whose outcome is unknown
// is safe. On a Raft member they can meet a leader change: the store fails
// the write with a retryable 503/504 (src/store/types.ts
// StoreUnavailableError), and before this the process exited ("cannot start:
// leadership changed while the write was in flight") — seen in the chaos
// test on a loaded machine, where a 50 ms tick lets elections flap while the
// members start.

import { StatusError } from '../core/errors.js';
import { type Clock, systemClock } from '../core/clock.js';
import { StoreUnavailableError } from '../core/store-unavailable.js';

function retryable(e: unknown): boolean {
  return e instanceof StoreUnavailableError || (e instanceof StatusError && (e.code === 503 || e.code === 504));
}

/** runs `write` until it succeeds, fails for another reason, or `deadlineMs` has passed */
export async function retryWhileUnavailable<T>(what: string, write: () => Promise<T>, log: (msg: string) => void, deadlineMs = 60_000, clock: Clock = systemClock): Promise<T> {
  const end = clock.now() + deadlineMs;
  for (let delay = 100; ; delay = Math.min(2000, delay * 2)) {
    try {
      return await write();
    } catch (e) {
      if (!retryable(e) || clock.now() + delay > end) throw e;
      log(`start-up: ${what}: ${(e as Error).message}; retrying in ${delay} ms`);
      await new Promise<void>((r) => clock.setTimeout(r, delay));
    }
  }
}
