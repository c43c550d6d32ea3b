// Static pods (spec 002 §4.2 `staticPodPath`): manifests in a directory run
// without the control plane; the pod's name is `<name>-<node>` and its uid a
// hash of the manifest and the node, so a changed file is a new pod.
// Connected to the control plane, each is shown as a mirror pod. As kubelet's
// file source (pkg/kubelet/config/common.go): a NoExecute toleration of every
// taint is added, and an invalid pod drops the file ("invalid pod").

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from './api-client.js';
import { staticPodErrors } from './static-pod-validation.js';

export const annotations = (domain: string) => ({
  source: `${domain}/config.source`,
  hash: `${domain}/config.hash`,
  mirror: `${domain}/config.mirror`,
});

export async function readStaticPods(dir: string, nodeName: string, domain: string, warn: (m: string) => void): Promise<KubeObject[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => /\.(ya?ml|json)$/.test(n) && !n.startsWith('.')).sort();
  } catch {
    return [];
  }
  const out: KubeObject[] = [];
  for (const n of names) {
    const file = join(dir, n);
    try {
      const text = await readFile(file, 'utf8');
      const doc = parseYaml(text) as KubeObject | null;
      if (!doc || doc.kind !== 'Pod' || !doc.metadata?.name || !Array.isArray((doc.spec as { containers?: unknown })?.containers)) {
        throw new Error('not a Pod manifest with metadata.name and spec.containers');
      }
      const hash = createHash('sha256').update(nodeName).update('\0').update(text).digest('hex');
      const uid = `${hash.slice(0, 8)}-${hash.slice(8, 12)}-${hash.slice(12, 16)}-${hash.slice(16, 20)}-${hash.slice(20, 32)}`;
      const a = annotations(domain);
      const pod: KubeObject = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          ...doc.metadata,
          name: `${doc.metadata.name}-${nodeName}`,
          namespace: doc.metadata.namespace ?? 'default',
          uid,
          annotations: { ...(doc.metadata.annotations ?? {}), [a.source]: 'file', [a.hash]: hash.slice(0, 32) },
        },
        spec: { ...doc.spec, nodeName, tolerations: withNoExecuteToleration(doc.spec?.tolerations) },
        status: { phase: 'Pending' },
      };
      const errs = staticPodErrors(pod);
      if (errs.length) throw new Error(`invalid pod: [${errs.join(', ')}]`);
      out.push(pod);
    } catch (e) {
      warn(`static pod ${file}: ${(e as Error).message}`);
    }
  }
  return out;
}

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

/**
 * kubelet's AddOrUpdateTolerationInPod of {operator: Exists, effect: NoExecute}: static pods outlive
 * every NoExecute taint; one matching it but for tolerationSeconds is replaced, else it is appended
 */
function withNoExecuteToleration(tolerations: unknown): Toleration[] {
  const list = Array.isArray(tolerations) ? (tolerations as Toleration[]) : [];
  const added = { operator: 'Exists', effect: 'NoExecute' };
  const same = (t: Toleration) => !t.key && t.operator === 'Exists' && t.effect === 'NoExecute' && !t.value;
  return list.some(same) ? list.map((t) => (same(t) ? added : t)) : [...list, added];
}

/** the mirror pod the API shows for a static pod */
export function mirrorOf(p: KubeObject, domain: string, node: { name: string; uid: string }): KubeObject {
  const a = annotations(domain);
  const { uid: _uid, resourceVersion: _rv, ...meta } = p.metadata;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...meta,
      annotations: { ...(p.metadata.annotations ?? {}), [a.mirror]: p.metadata.annotations![a.hash]! },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid, controller: true }],
    },
    spec: p.spec,
  };
}
