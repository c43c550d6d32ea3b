// `--runtime-config` (spec 000 §9.1): comma-separated `<key>[=<value>]`, an
// omitted value meaning `true`. A key is `<group>/<version>` (`v1` or `api/v1`
// for the core group), `<group>/<version>/<resource>`, or `api/all`. `false`
// stops serving it. orch serves no alpha or beta built-in versions, so `true`
// can only re-enable what a default or an earlier key disabled; a key that
// names nothing served is a startup error (a typo must not pass silently).

import type { ResourceDefinition } from '../registry/types.js';

export interface RuntimeConfigEntry {
  group: string;
  version: string;
  resource?: string;
  all?: boolean;
  enabled: boolean;
}

export class RuntimeConfigError extends Error {}

export function parseRuntimeConfig(text: string): RuntimeConfigEntry[] {
  const out: RuntimeConfigEntry[] = [];
  for (const raw of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = raw.indexOf('=');
    const key = eq >= 0 ? raw.slice(0, eq) : raw;
    const value = eq >= 0 ? raw.slice(eq + 1) : 'true';
    if (value !== 'true' && value !== 'false') throw new RuntimeConfigError(`--runtime-config: ${raw}: the value must be true or false`);
    const enabled = value === 'true';
    if (key === 'api/all') {
      out.push({ group: '', version: '', all: true, enabled });
      continue;
    }
    const parts = key.split('/');
    if (parts[0] === 'api' && parts.length >= 2) parts.shift();
    if (parts.length === 1 && parts[0] === 'v1') out.push({ group: '', version: 'v1', enabled });
    else if (parts.length === 2 && parts[0] === 'v1') out.push({ group: '', version: 'v1', resource: parts[1], enabled });
    else if (parts.length === 2) out.push({ group: parts[0]!, version: parts[1]!, enabled });
    else if (parts.length === 3) out.push({ group: parts[0]!, version: parts[1]!, resource: parts[2], enabled });
    else throw new RuntimeConfigError(`--runtime-config: ${raw}: expected <group>/<version>[/<resource>]`);
  }
  return out;
}

/** the definitions served under the configuration (later entries win) */
export function applyRuntimeConfig(defs: ResourceDefinition[], entries: RuntimeConfigEntry[]): ResourceDefinition[] {
  const enabled = new Map(defs.map((d) => [d, true]));
  for (const e of entries) {
    const hits = defs.filter(
      (d) => e.all || (d.group === e.group && d.version === e.version && (e.resource === undefined || d.resource === e.resource)),
    );
    if (hits.length === 0) {
      const name = `${e.group ? `${e.group}/` : ''}${e.version}${e.resource ? `/${e.resource}` : ''}`;
      throw new RuntimeConfigError(`--runtime-config: ${name} is not an API this server knows`);
    }
    for (const d of hits) enabled.set(d, e.enabled);
  }
  return defs.filter((d) => enabled.get(d));
}
