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
  /** kube's NamesAccepted reason when refused: PluralConflict, SingularConflict, ShortNamesConflict, KindConflict, ListKindConflict */
  reason?: string;
  /** kube's words: `"foos" is already in use` */
  message?: string;
}

const inUse = (v: string): string => `${JSON.stringify(v)} is already in use`;

export function acceptNames(crds: NamedCrd[]): Map<string, NamesVerdict> {
  const ordered = [...crds].sort((a, b) => a.createRevision - b.createRevision || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const resources = new Map<string, string>(); // `<group>/<name>` → owning CRD
  const kinds = new Map<string, string>();
  const out = new Map<string, NamesVerdict>();
  for (const c of ordered) {
    const g = c.spec.group;
    const n = c.spec.names;
    const taken = (m: Map<string, string>, v: string): boolean => {
      const owner = m.get(`${g}/${v}`);
      return owner !== undefined && owner !== c.name;
    };
    const listKind = n.listKind ?? `${n.kind}List`;
    // as kube's naming controller: every check runs, the last conflict found names the reason
    let refused: NamesVerdict | undefined;
    if (taken(resources, n.plural)) refused = { accepted: false, reason: 'PluralConflict', message: inUse(n.plural) };
    if (n.singular && taken(resources, n.singular)) refused = { accepted: false, reason: 'SingularConflict', message: inUse(n.singular) };
    const shorts = (n.shortNames ?? []).filter((v) => taken(resources, v)).map(inUse);
    if (shorts.length > 0) refused = { accepted: false, reason: 'ShortNamesConflict', message: shorts.length === 1 ? shorts[0] : `[${shorts.join(', ')}]` };
    if (taken(kinds, n.kind)) refused = { accepted: false, reason: 'KindConflict', message: inUse(n.kind) };
    if (taken(kinds, listKind)) refused = { accepted: false, reason: 'ListKindConflict', message: inUse(listKind) };
    if (refused) {
      out.set(c.name, refused);
      continue;
    }
    for (const v of [n.plural, ...(n.singular ? [n.singular] : []), ...(n.shortNames ?? [])]) resources.set(`${g}/${v}`, c.name);
    for (const v of [n.kind, listKind]) kinds.set(`${g}/${v}`, c.name);
    out.set(c.name, { accepted: true });
  }
  return out;
}
