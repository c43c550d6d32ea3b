// /livez, /readyz, /healthz (spec 000 §4.11): 200 means healthy; `verbose`
// lists every check; `exclude=<name>` skips one; `/livez/<check>` runs one.

export interface HealthCheck {
  name: string;
  /** undefined = ok; a string = the failure reason */
  check(): string | undefined | Promise<string | undefined>;
}

export class HealthChecks {
  private readonly livez: HealthCheck[] = [];
  private readonly readyz: HealthCheck[] = [];

  /** a check used by both /livez and /readyz (and /healthz) */
  add(check: HealthCheck, where: 'both' | 'ready' = 'both'): void {
    if (where === 'both') this.livez.push(check);
    this.readyz.push(check);
  }

  names(kind: 'livez' | 'readyz' | 'healthz'): string[] {
    return this.list(kind).map((c) => c.name);
  }

  private list(kind: 'livez' | 'readyz' | 'healthz'): HealthCheck[] {
    return kind === 'livez' ? this.livez : this.readyz;
  }

  /** returns status and text body for a health path, or undefined when the path is not a health path */
  async serve(path: string, query: URLSearchParams): Promise<{ status: number; body: string } | undefined> {
    const m = /^\/(livez|readyz|healthz)(?:\/(.+))?\/?$/.exec(path);
    if (!m) return undefined;
    const kind = m[1] as 'livez' | 'readyz' | 'healthz';
    const single = m[2];
    const checks = this.list(kind);
    if (single !== undefined) {
      const c = checks.find((x) => x.name === single);
      if (!c) return { status: 404, body: '404 page not found\n' };
      const err = await run(c);
      return err === undefined
        ? { status: 200, body: 'ok' }
        : { status: 500, body: `internal server error: ${err}\n` };
    }
    const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')));
    const verbose = query.has('verbose');
    const lines: string[] = [];
    let failed = false;
    for (const c of checks) {
      if (excluded.has(c.name)) {
        lines.push(`[+]${c.name} excluded: ok`);
        excluded.delete(c.name);
        continue;
      }
      const err = await run(c);
      if (err === undefined) lines.push(`[+]${c.name} ok`);
      else {
        failed = true;
        // the reason is withheld from the response like Kubernetes does; the server log has it
        lines.push(`[-]${c.name} failed: reason withheld`);
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
}

async function run(c: HealthCheck): Promise<string | undefined> {
  try {
    return await c.check();
  } catch (e) {
    return (e as Error).message;
  }
}
