// /livez, /readyz, /healthz (spec 000 §4.11): 200 means healthy; `verbose`
// lists every check; `exclude=<name>` skips one; `/livez/<check>` runs one.
//
// The answer is a pure function of the checks' results (`formatHealth`), so
// that a TLS worker process can give the same answer from a snapshot of
// them when the main event loop is too busy to (src/gateway/health-snapshot.ts).

export interface HealthCheck {
  name: string;
  /** undefined = ok; a string = the failure reason */
  check(): string | undefined | Promise<string | undefined>;
}

export type HealthKind = 'livez' | 'readyz' | 'healthz';

const HEALTH_PATH_RE = /^\/(livez|readyz|healthz)(?:\/(.+))?\/?$/;

/** the kind and single check a health path names, or undefined when it is not a health path */
export function parseHealthPath(path: string): { kind: HealthKind; single: string | undefined } | undefined {
  const m = HEALTH_PATH_RE.exec(path);
  if (!m) return undefined;
  return { kind: m[1] as HealthKind, single: m[2] };
}

export interface HealthAnswer {
  status: number;
  body: string;
}

/**
 * The answer for a health path, given the kind's checks in order and a way to
 * learn each one's result (undefined = ok). Excluded checks are not asked.
 */
export async function formatHealth(
  kind: HealthKind,
  single: string | undefined,
  names: readonly string[],
  query: URLSearchParams,
  resultOf: (name: string) => string | undefined | Promise<string | undefined>,
): Promise<HealthAnswer> {
  if (single !== undefined) {
    if (!names.includes(single)) return { status: 404, body: '404 page not found\n' };
    const err = await resultOf(single);
    return err === undefined ? { status: 200, body: 'ok' } : { status: 500, body: `internal server error: ${err}\n` };
  }
  const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')));
  const verbose = query.has('verbose');
  const lines: string[] = [];
  let failed = false;
  for (const name of names) {
    if (excluded.has(name)) {
      lines.push(`[+]${name} excluded: ok`);
      excluded.delete(name);
      continue;
    }
    const err = await resultOf(name);
    if (err === undefined) lines.push(`[+]${name} ok`);
    else {
      failed = true;
      // the reason is withheld from the response like Kubernetes does; the server log has it
      lines.push(`[-]${name} failed: reason withheld`);
    }
  }
  if (excluded.size > 0) {
    lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(',')}`);
  }
  if (failed) return { status: 500, body: `${lines.join('\n')}\n${kind} check failed\n` };
  // spec 000 §4.11: the verbose summary line is `healthz check passed`
  if (verbose) return { status: 200, body: `${lines.join('\n')}\nhealthz check passed\n` };
  return { status: 200, body: 'ok' };
}

export class HealthChecks {
  private readonly livez: HealthCheck[] = [];
  private readonly readyz: HealthCheck[] = [];

  /** a check used by both /livez and /readyz (and /healthz) */
  add(check: HealthCheck, where: 'both' | 'ready' = 'both'): void {
    if (where === 'both') this.livez.push(check);
    this.readyz.push(check);
  }

  names(kind: HealthKind): string[] {
    return this.list(kind).map((c) => c.name);
  }

  private list(kind: HealthKind): HealthCheck[] {
    return kind === 'livez' ? this.livez : this.readyz;
  }

  /** every check (both lists, each once), for a snapshot of their results */
  all(): HealthCheck[] {
    return [...new Set([...this.livez, ...this.readyz])];
  }

  /** returns status and text body for a health path, or undefined when the path is not a health path */
  async serve(path: string, query: URLSearchParams): Promise<HealthAnswer | undefined> {
    const p = parseHealthPath(path);
    if (!p) return undefined;
    const checks = this.list(p.kind);
    const byName = new Map(checks.map((c) => [c.name, c]));
    return formatHealth(p.kind, p.single, [...byName.keys()], query, (name) => runCheck(byName.get(name)!));
  }
}

/** a check's result; a check that throws has failed with its message */
export async function runCheck(c: HealthCheck): Promise<string | undefined> {
  try {
    return await c.check();
  } catch (e) {
    return (e as Error).message;
  }
}
