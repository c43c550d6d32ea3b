// Which CRD holds which names (the NamesAccepted condition): decided from the
// stored CRDs alone, oldest first (create revision, then name), so that every
// member of a cluster and every restart reaches the same answer without
// coordination (docs/crds.md). Within one group a plural, singular or short
// name may belong to one CRD only, and a kind or list kind likewise; a CRD that
// would clash with an older one is not served and says why.

import type { CrdSpec } from './convert.js';

export interface NamedCrd {
  name: string;
  createRevision: number;
  spec: CrdSpec;
}

export interface NamesVerdict {
  accepted: boolean;
  /** the reason a CRD's names were refused */
  message?: string;
}

export function acceptNames(crds: NamedCrd[]): Map<string, NamesVerdict> {
  const ordered = [...crds].sort((a, b) => a.createRevision - b.createRevision || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const resources = new Map<string, string>(); // `<group>/<name>` → owning CRD
  const kinds = new Map<string, string>();
  const out = new Map<string, NamesVerdict>();
  for (const c of ordered) {
    const g = c.spec.group;
    const n = c.spec.names;
    const resourceNames: [string, string][] = [['plural', n.plural], ...(n.singular ? [['singular', n.singular] as [string, string]] : []), ...(n.shortNames ?? []).map((s) => ['shortNames', s] as [string, string])];
    const kindNames: [string, string][] = [['kind', n.kind], ['listKind', n.listKind ?? `${n.kind}List`]];
    const problems: string[] = [];
    const mine = new Set<string>();
    for (const [field, v] of resourceNames) {
      const owner = resources.get(`${g}/${v}`);
      if (owner !== undefined && owner !== c.name) problems.push(`${field} "${v}" is already in use by ${owner}`);
      mine.add(v);
    }
    for (const [field, v] of kindNames) {
      const owner = kinds.get(`${g}/${v}`);
      if (owner !== undefined && owner !== c.name) problems.push(`${field} "${v}" is already in use by ${owner}`);
    }
    if (problems.length > 0) {
      out.set(c.name, { accepted: false, message: problems.join(', ') });
      continue;
    }
    for (const v of mine) resources.set(`${g}/${v}`, c.name);
    for (const [, v] of kindNames) kinds.set(`${g}/${v}`, c.name);
    out.set(c.name, { accepted: true });
  }
  return out;
}
