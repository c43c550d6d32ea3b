// The randomness port (issue #9 item 6): jitter, retry backoff, random picks
// and cache nonces take a `Random` from the composition root, so a test seeds
// it and replays the same choices.
//
// The rule: a value an attacker must not guess — a token, a secret, a key, a
// UID, a nonce that authenticates — comes from node:crypto (randomBytes,
// randomUUID) and never from this port; this port is for choices whose only
// requirement is spread (jitter, backoff, a pick among equals).

/** a float in [0, 1), like Math.random */
export type Random = () => number;

export const systemRandom: Random = () => Math.random();

/** a deterministic Random (mulberry32) for tests and simulations */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `base` spread uniformly over [base·(1−spread), base·(1+spread)) */
export function jitter(random: Random, base: number, spread: number): number {
  return base * (1 - spread + 2 * spread * random());
}
