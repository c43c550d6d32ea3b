// Finding what a streaming request of the agent names (docs/nodeagent.md
// "Streams"): `/{kind}/{namespace}/{pod}/{container}` → the pod the agent runs
// and the runtime's container (the newest attempt, or the one before it for
// `previous`). Failures are Kubernetes Status codes as the kubelet answers
// them: 404 for a pod or container the node does not have, 400 for a bad name.

import type { KubeObject } from '../api-client.js';
import { LABEL_CONTAINER, LABEL_POD_UID } from '../pod-spec.js';
import type { RuntimeClient } from '../runtime/client.js';
import type { Container } from '../runtime/types.js';

export class HttpError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function checkName(what: string, v: string): void {
  if (!NAME.test(v) || v.length > 253) throw new HttpError(400, `invalid ${what} name "${v}"`);
}

export function findPod(pods: KubeObject[], ns: string, name: string, nodeName: string): KubeObject {
  const pod = pods.find((p) => (p.metadata.namespace ?? 'default') === ns && p.metadata.name === name);
  if (!pod) throw new HttpError(404, `pod ${ns}/${name} not found on node ${nodeName}`);
  return pod;
}

/** the runtime's sandboxes of a pod, newest first */
export async function sandboxesOf(runtime: RuntimeClient, pod: KubeObject) {
  const sbs = await runtime.listPodSandbox({ [LABEL_POD_UID]: pod.metadata.uid! });
  return sbs.sort((a, b) => b.metadata.attempt - a.metadata.attempt || b.createdAt - a.createdAt);
}

/**
 * The runtime container of `container` in `pod`: the newest attempt, or with
 * `previous` the newest one that ended before it (kube: "previous terminated container").
 */
export async function findContainer(runtime: RuntimeClient, pod: KubeObject, container: string, previous = false): Promise<Container> {
  const ns = pod.metadata.namespace ?? 'default';
  const spec = pod.spec as { containers?: { name: string }[]; initContainers?: { name: string }[]; ephemeralContainers?: { name: string }[] };
  const declared = [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])];
  if (!declared.some((c) => c.name === container)) throw new HttpError(404, `container ${container} not found in pod ${ns}/${pod.metadata.name}`);
  const all: Container[] = [];
  for (const sb of await sandboxesOf(runtime, pod)) all.push(...(await runtime.listContainers({ podSandboxId: sb.id })).filter((x) => x.labels[LABEL_CONTAINER] === container));
  all.sort((a, b) => b.metadata.attempt - a.metadata.attempt || b.createdAt - a.createdAt);
  if (previous) {
    const prev = all[1];
    if (!prev) throw new HttpError(400, `previous terminated container "${container}" in pod "${pod.metadata.name}" not found`);
    return prev;
  }
  if (!all[0]) throw new HttpError(404, `container ${container} of pod ${ns}/${pod.metadata.name} has not been created`);
  return all[0];
}
