// Polls a condition until it holds (controllers, agents and watches act
// asynchronously); fails naming `what` — and the last error the check threw —
// when it never does. No timing is asserted: the timeout only bounds a failure.

export interface EventuallyOptions {
  /** give up after this long (default 10 s) */
  timeoutMs?: number;
  /** pause between checks (default 25 ms) */
  intervalMs?: number;
  /** extra text for the failure message (e.g. a process's output) */
  context?: () => string;
}

type Truthy<T> = Exclude<T, false | undefined | null | 0 | ''>;

/** resolves with the first truthy value `check` returns; errors it throws count as "not yet" */
export async function eventually<T>(
  check: () => T | Promise<T>,
  what = 'condition',
  options: number | EventuallyOptions = {},
): Promise<Truthy<T>> {
  const opts = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as Truthy<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 25));
  }
  const why = last === undefined ? '' : ` (last error: ${last instanceof Error ? last.message : String(last)})`;
  const extra = opts.context ? `\n${opts.context()}` : '';
  throw new Error(`timed out waiting for ${what}${why}${extra}`);
}
