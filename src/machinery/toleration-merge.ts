// kube's tolerations.MergeTolerations (pkg/util/tolerations), which the
// RuntimeClass admission plugin applies to a pod's tolerations and its class's:
// the two lists are joined, and a toleration another one already covers (a
// superset: same key or a key-less Exists, same effect or none, a value that
// Exists or Equal-matches, no shorter NoExecute seconds) is dropped, the
// earlier of two equal ones kept. A pod's own toleration can thus give way to
// a broader one of its class.

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | null;
}

/** Go's zero values: an absent string is "", absent seconds are nil */
const str = (v: string | undefined): string => v ?? '';
const seconds = (t: Toleration): number | undefined => (typeof t.tolerationSeconds === 'number' ? t.tolerationSeconds : undefined);

/** kube's Semantic.DeepEqual of two tolerations */
function same(a: Toleration, b: Toleration): boolean {
  return str(a.key) === str(b.key) && str(a.operator) === str(b.operator) && str(a.value) === str(b.value) && str(a.effect) === str(b.effect) && seconds(a) === seconds(b);
}

/** whether `ss` tolerates every taint `t` tolerates (kube's isSuperset) */
export function toleratesSuperset(ss: Toleration, t: Toleration): boolean {
  if (same(ss, t)) return true;
  // a key-less Exists matches every key
  if (str(t.key) !== str(ss.key) && (str(ss.key) !== '' || ss.operator !== 'Exists')) return false;
  // an empty effect matches every effect
  if (str(t.effect) !== str(ss.effect) && str(ss.effect) !== '') return false;
  const ssSeconds = seconds(ss);
  if (ss.effect === 'NoExecute' && ssSeconds !== undefined) {
    const tSeconds = seconds(t);
    if (tSeconds === undefined || tSeconds > ssSeconds) return false;
  }
  switch (str(ss.operator)) {
    // an empty operator means Equal; kube compares t's operator as written
    case 'Equal':
    case '':
      return t.operator === 'Equal' && str(t.value) === str(ss.value);
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** `first` then `second`, without the tolerations another one of them covers */
export function mergeTolerations<T extends Toleration>(first: readonly T[], second: readonly T[]): T[] {
  const all = [...first, ...second];
  const merged: T[] = [];
  all.forEach((t, i) => {
    if (merged.some((m) => toleratesSuperset(m, t))) return;
    // a broader one later in the list wins; of equal ones the first is kept
    if (all.slice(i + 1).some((later) => !same(t, later) && toleratesSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}
