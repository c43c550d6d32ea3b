// The relationship graph of the Node authorizer (spec 001_bdb487117be0ea8a.txt
// §5.15): which secrets, configmaps, persistent volume claims, persistent
// volumes and service accounts a node may reach through the pods bound to it.
//
// Design: every pod contributes a set of "references" (kind/namespace/name)
// plus the node it is bound to. Edges are reference-counted per node, so a pod
// update or delete only touches that pod's own contribution (incremental, no
// rebuild). PVCs contribute an edge PVC → PV (spec.volumeName), and PVs an
// edge PV → secrets (CSI/other secretRef fields), resolved at query time so the
// order in which pods, PVCs and PVs arrive does not matter.

import type { SourceObject } from '../types.js';

export type VertexKind = 'secret' | 'configmap' | 'pvc' | 'pv' | 'serviceaccount';

/** `kind/namespace/name`; cluster-scoped objects (PVs) have an empty namespace */
export function vertexKey(kind: VertexKind, namespace: string, name: string): string {
  return `${kind}/${namespace}/${name}`;
}

interface PodEntry {
  node: string;
  refs: string[];
}

type Obj = Record<string, unknown>;

const asObj = (v: unknown): Obj | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined);
const asArr = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asObj).filter((x): x is Obj => x !== undefined) : []);
const asStr = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Every object a pod references by name (kube: the node graph's pod edges). */
export function podReferences(pod: SourceObject): string[] {
  const ns = pod.metadata?.namespace ?? '';
  const spec = asObj(pod.spec) ?? {};
  const out = new Set<string>();
  const add = (kind: VertexKind, name: string | undefined, namespace = ns): void => {
    if (name) out.add(vertexKey(kind, namespace, name));
  };
  add('serviceaccount', asStr(spec.serviceAccountName) ?? asStr(spec.serviceAccount));
  for (const s of asArr(spec.imagePullSecrets)) add('secret', asStr(s.name));
  const containers = [...asArr(spec.initContainers), ...asArr(spec.containers), ...asArr(spec.ephemeralContainers)];
  for (const c of containers) {
    for (const ef of asArr(c.envFrom)) {
      add('secret', asStr(asObj(ef.secretRef)?.name));
      add('configmap', asStr(asObj(ef.configMapRef)?.name));
    }
    for (const e of asArr(c.env)) {
      const from = asObj(e.valueFrom);
      add('secret', asStr(asObj(from?.secretKeyRef)?.name));
      add('configmap', asStr(asObj(from?.configMapKeyRef)?.name));
    }
  }
  for (const v of asArr(spec.volumes)) {
    add('secret', asStr(asObj(v.secret)?.secretName));
    add('configmap', asStr(asObj(v.configMap)?.name));
    add('pvc', asStr(asObj(v.persistentVolumeClaim)?.claimName));
    // generic ephemeral volumes create a PVC named <pod>-<volume>
    if (asObj(v.ephemeral) && pod.metadata?.name && asStr(v.name)) add('pvc', `${pod.metadata.name}-${String(v.name)}`);
    for (const src of asArr(asObj(v.projected)?.sources)) {
      add('secret', asStr(asObj(src.secret)?.name));
      add('configmap', asStr(asObj(src.configMap)?.name));
    }
    // volume plugins with a secretRef (cephfs, rbd, iscsi, flexVolume, csi, ...)
    for (const val of Object.values(v)) {
      const ref = asObj(asObj(val)?.secretRef) ?? asObj(asObj(val)?.nodePublishSecretRef);
      add('secret', asStr(ref?.name));
    }
  }
  return [...out];
}

/** Secrets a PV references (spec.csi.*SecretRef and plugin secretRef), each with its own namespace. */
export function pvSecretReferences(pv: SourceObject): string[] {
  const spec = asObj(pv.spec) ?? {};
  const out = new Set<string>();
  for (const val of Object.values(spec)) {
    const plugin = asObj(val);
    if (!plugin) continue;
    for (const [k, ref] of Object.entries(plugin)) {
      if (!/secretref$/i.test(k)) continue;
      const r = asObj(ref);
      const name = asStr(r?.name);
      if (name) out.add(vertexKey('secret', asStr(r?.namespace) ?? 'default', name));
    }
  }
  return [...out];
}

export class NodeGraph {
  private readonly pods = new Map<string, PodEntry>();
  /** node → (vertex key → number of pods referencing it) */
  private readonly byNode = new Map<string, Map<string, number>>();
  /** node → names of pods bound to it (`ns/name`) */
  private readonly podsByNode = new Map<string, Set<string>>();
  /** PVC key → PV name */
  private readonly pvcVolume = new Map<string, string>();
  /** PV name → claim key and secret keys */
  private readonly pvInfo = new Map<string, { claim?: string; secrets: string[] }>();

  /** ADDED/MODIFIED pod: replace its contribution; an unbound pod (no nodeName) has none */
  setPod(pod: SourceObject): void {
    const key = podKey(pod);
    this.deletePodKey(key);
    const node = asStr(asObj(pod.spec)?.nodeName);
    if (!node) return;
    const refs = podReferences(pod);
    this.pods.set(key, { node, refs });
    let counts = this.byNode.get(node);
    if (!counts) this.byNode.set(node, (counts = new Map()));
    for (const r of refs) counts.set(r, (counts.get(r) ?? 0) + 1);
    let set = this.podsByNode.get(node);
    if (!set) this.podsByNode.set(node, (set = new Set()));
    set.add(key);
  }

  deletePod(pod: SourceObject): void {
    this.deletePodKey(podKey(pod));
  }

  setPVC(pvc: SourceObject): void {
    const key = vertexKey('pvc', pvc.metadata?.namespace ?? '', pvc.metadata?.name ?? '');
    const vol = asStr(asObj(pvc.spec)?.volumeName);
    if (vol) this.pvcVolume.set(key, vol);
    else this.pvcVolume.delete(key);
  }

  deletePVC(pvc: SourceObject): void {
    this.pvcVolume.delete(vertexKey('pvc', pvc.metadata?.namespace ?? '', pvc.metadata?.name ?? ''));
  }

  setPV(pv: SourceObject): void {
    const claim = asObj(asObj(pv.spec)?.claimRef);
    const claimKey = claim && asStr(claim.name) ? vertexKey('pvc', asStr(claim.namespace) ?? '', String(claim.name)) : undefined;
    this.pvInfo.set(pv.metadata?.name ?? '', { claim: claimKey, secrets: pvSecretReferences(pv) });
  }

  deletePV(pv: SourceObject): void {
    this.pvInfo.delete(pv.metadata?.name ?? '');
  }

  /** Whether `node` reaches the object through a pod bound to it (directly, or pod → PVC → PV → secret). */
  hasRelationship(node: string, kind: VertexKind, namespace: string, name: string): boolean {
    const counts = this.byNode.get(node);
    if (!counts) return false;
    const target = vertexKey(kind, kind === 'pv' ? '' : namespace, name);
    if (counts.has(target)) return true;
    if (kind !== 'pv' && kind !== 'secret') return false;
    // indirect: through each PVC the node's pods use (few per node)
    for (const ref of counts.keys()) {
      if (!ref.startsWith('pvc/')) continue;
      const pvName = this.pvcVolume.get(ref);
      if (!pvName) continue;
      const pv = this.pvInfo.get(pvName);
      // kube requires the PV to be bound back to that claim
      if (pv?.claim !== undefined && pv.claim !== ref) continue;
      if (kind === 'pv' && pvName === name) return true;
      if (kind === 'secret' && pv?.secrets.includes(target)) return true;
    }
    return false;
  }

  /** Whether the pod `namespace/name` is bound to `node`. */
  podOnNode(node: string, namespace: string, name: string): boolean {
    return this.podsByNode.get(node)?.has(`${namespace}/${name}`) ?? false;
  }

  /** A canonical dump of the pod edges (for tests): node → sorted references. */
  snapshot(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [node, counts] of [...this.byNode].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const pods = [...(this.podsByNode.get(node) ?? [])].map((p) => `pod/${p}`);
      out[node] = [...counts.keys(), ...pods].sort();
    }
    return out;
  }

  private deletePodKey(key: string): void {
    const prev = this.pods.get(key);
    if (!prev) return;
    this.pods.delete(key);
    const counts = this.byNode.get(prev.node);
    if (counts) {
      for (const r of prev.refs) {
        const n = (counts.get(r) ?? 0) - 1;
        if (n <= 0) counts.delete(r);
        else counts.set(r, n);
      }
    }
    const set = this.podsByNode.get(prev.node);
    set?.delete(key);
    if (set && set.size === 0 && counts && counts.size === 0) {
      this.podsByNode.delete(prev.node);
      this.byNode.delete(prev.node);
    } else if (set && set.size === 0) this.podsByNode.delete(prev.node);
  }
}

function podKey(pod: SourceObject): string {
  return `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
}
