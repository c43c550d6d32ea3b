// The CronJob controller's decisions, pure (kube's cronjob utils.go): the
// most recent schedule time it missed, the Job name of a schedule time, and
// the finished Jobs beyond a history limit.

import type { ApiObject, JSONValue } from '../../registry/types.js';
import { type CronSchedule, isConstantDelay, nextAfter } from '../../machinery/cron.js';

export interface Missed {
  /** the latest schedule time in (earliest, now], undefined when none */
  mostRecent?: number;
  /** how many schedule times fell in that window (estimated past 100, as kube does) */
  missed: number;
}

/**
 * kube's mostRecentScheduleTime: from the last schedule time (or the
 * creation), or from `now − startingDeadlineSeconds` when that is later, to
 * now. Past 100 missed times the count is kube's estimate from the first
 * interval and the most recent time is found in a window before now.
 */
export function mostRecentSchedule(s: CronSchedule, earliest: number, now: number, startingDeadlineSeconds?: number): Missed {
  const from = startingDeadlineSeconds !== undefined ? Math.max(earliest, now - startingDeadlineSeconds * 1000) : earliest;
  if (isConstantDelay(s)) {
    // @every: the times are from's second + k·delay (kube counts them so, from the deadline when it is later), no walk
    const first = nextAfter(s, from)!;
    if (first > now) return { missed: 0 };
    const missed = Math.floor((now - first) / s.everyMs) + 1;
    return { mostRecent: first + (missed - 1) * s.everyMs, missed };
  }
  let t = from;
  let mostRecent: number | undefined;
  let missed = 0;
  while (missed <= 100) {
    const n = nextAfter(s, t);
    if (n === undefined || n > now) return { ...(mostRecent !== undefined ? { mostRecent } : {}), missed };
    mostRecent = n;
    missed++;
    t = n;
  }
  const t1 = nextAfter(s, from)!;
  const t2 = nextAfter(s, t1)!;
  const estimate = Math.floor((now - t1) / Math.max(1, t2 - t1)) + 1;
  for (let w = 3_600_000; ; w *= 2) {
    let c = Math.max(mostRecent!, now - w);
    // once the window reaches back to the 101st time, that one is the answer if nothing later is
    let last = c === mostRecent ? mostRecent : undefined;
    for (let n = nextAfter(s, c); n !== undefined && n <= now; n = nextAfter(s, c)) {
      last = n;
      c = n;
    }
    if (last !== undefined) return { mostRecent: last, missed: Math.max(101, estimate) };
  }
}

/**
 * The first schedule time after `now` (kube's nextScheduleTimeDuration,
 * without its 100 ms): for @every counted from the last schedule time or the
 * creation (`earliest`), as the times themselves are.
 */
export function nextSchedule(s: CronSchedule, earliest: number, now: number): number | undefined {
  if (!isConstantDelay(s)) return nextAfter(s, now);
  const t1 = nextAfter(s, earliest)!;
  return t1 > now ? t1 : t1 + (Math.floor((now - t1) / s.everyMs) + 1) * s.everyMs;
}

/** `<cronjob>-<scheduled minutes since the epoch>` (kube's getJobName) */
export function jobNameFor(cronJob: string, scheduled: number): string {
  return `${cronJob}-${Math.floor(scheduled / 60_000)}`;
}

const startOf = (j: ApiObject): number => Date.parse(String((j.status as Record<string, JSONValue> | undefined)?.startTime ?? j.metadata?.creationTimestamp ?? '')) || 0;

/** the oldest of `finished` beyond `limit` (by start time, then creation), to delete; none without a limit */
export function overHistory(finished: ApiObject[], limit: number | undefined): ApiObject[] {
  if (limit === undefined || finished.length <= limit) return [];
  return [...finished].sort((a, b) => startOf(a) - startOf(b)).slice(0, finished.length - limit);
}
