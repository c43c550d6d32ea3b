import type { Definitions } from '../machinery/schema/types.js';
import type { ResourceDefinition } from './types.js';

/**
 * The set of served kinds. Built-in kinds are registered at start; custom
 * resources register the same way at run time (a schema plus a strategy).
 */
export class Registry {
  private readonly byPath = new Map<string, ResourceDefinition>();
  private readonly byKind = new Map<string, ResourceDefinition>();
  private readonly listeners = new Set<() => void>();
  private generation = 0;

  constructor(
    readonly apiDomain: string,
    readonly defs: Definitions,
    definitions: ResourceDefinition[] = [],
  ) {
    for (const d of definitions) this.add(d, false);
  }

  add(def: ResourceDefinition, notify = true): void {
    this.byPath.set(pathKey(def.group, def.version, def.resource), def);
    this.byKind.set(kindKey(def.group, def.version, def.kind), def);
    this.generation++;
    if (notify) for (const l of this.listeners) l();
  }

  remove(group: string, version: string, resource: string): void {
    const def = this.byPath.get(pathKey(group, version, resource));
    if (!def) return;
    this.byPath.delete(pathKey(group, version, resource));
    this.byKind.delete(kindKey(group, version, def.kind));
    this.generation++;
    for (const l of this.listeners) l();
  }

  /** bumps whenever the served set changes (discovery/OpenAPI caches key on it) */
  get version(): number {
    return this.generation;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  lookup(group: string, version: string, resource: string): ResourceDefinition | undefined {
    return this.byPath.get(pathKey(group, version, resource));
  }

  lookupKind(group: string, version: string, kind: string): ResourceDefinition | undefined {
    return this.byKind.get(kindKey(group, version, kind));
  }

  all(): ResourceDefinition[] {
    return [...this.byPath.values()];
  }

  /** group -> versions served, in registration order */
  groups(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const d of this.byPath.values()) {
      const versions = out.get(d.group) ?? [];
      if (!versions.includes(d.version)) versions.push(d.version);
      out.set(d.group, versions);
    }
    return out;
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.groups().get(group)?.includes(version) ?? false;
  }
}

function pathKey(group: string, version: string, resource: string): string {
  return `${group}/${version}/${resource}`;
}

function kindKey(group: string, version: string, kind: string): string {
  return `${group}/${version}/${kind}`;
}

export function apiVersionOf(def: ResourceDefinition): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}
