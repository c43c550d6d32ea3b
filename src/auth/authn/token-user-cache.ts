// Who a bearer token last authenticated as, for shedding only (issue #15).
//
// Overload shedding before work (src/gateway/flowcontrol/early-shed.ts) needs
// the requester to pick a priority level and flow, and must not authenticate
// to find out (that is the work it saves). The authentication chain records
// here each token it accepted and the user it made of it; the shedder looks
// the token up to classify the request. This is never an authentication: a
// request that is not shed goes through the whole chain, so a token revoked
// or expired since is still refused there (401). The worst a stale entry does
// is classify a request that would get 401 as its former user's and refuse
// it 429 instead while that user's level is full, for at most `ttlMs`.
//
// Tokens are kept as SHA-256 digests, never in clear; the cache is bounded
// (oldest first out) so that a flood of distinct tokens cannot grow it.

import { createHash } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { UserInfo } from '../types.js';

export interface TokenUserCacheOptions {
  clock: Clock;
  /** an entry classifies this long after the token last authenticated (default 10 s) */
  ttlMs?: number;
  /** at most this many tokens (default 10,000; the oldest goes first) */
  maxEntries?: number;
}

export const DEFAULT_TOKEN_USER_TTL_MS = 10_000;
export const DEFAULT_TOKEN_USER_ENTRIES = 10_000;

export class TokenUserCache {
  private readonly entries = new Map<string, { user: UserInfo; until: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(private readonly o: TokenUserCacheOptions) {
    this.ttlMs = o.ttlMs ?? DEFAULT_TOKEN_USER_TTL_MS;
    this.maxEntries = Math.max(1, o.maxEntries ?? DEFAULT_TOKEN_USER_ENTRIES);
  }

  /** the chain accepted `token` as `user` (called on every successful token authentication) */
  remember(token: string, user: UserInfo): void {
    const key = digest(token);
    // re-inserted, so Map order stays oldest-first for eviction
    this.entries.delete(key);
    this.entries.set(key, { user, until: this.o.clock.now() + this.ttlMs });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** the user to classify a request bearing `token` as, for shedding only; undefined when unknown or expired */
  classifyAs(token: string): UserInfo | undefined {
    const key = digest(token);
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.until <= this.o.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.user;
  }

  get size(): number {
    return this.entries.size;
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}
