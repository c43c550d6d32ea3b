// The one store failure every layer maps to a Status (503/504, src/core/errors.ts).
// Thrown by src/store/; declared here, below everything, so that src/core/ imports nothing.

/**
 * The store cannot take the write or read now (no leader, leadership lost,
 * shutting down). `ambiguous`: the write may still be applied (504, outcome
 * unknown) rather than certainly not accepted (503). The API answers with
 * Retry-After; it is never a false success.
 */
export class StoreUnavailableError extends Error {
  readonly code: 503 | 504;
  readonly retryAfterSeconds = 1;
  constructor(
    message: string,
    readonly ambiguous: boolean,
  ) {
    super(message);
    this.name = 'StoreUnavailableError';
    this.code = ambiguous ? 504 : 503;
  }
}
