// What kubelet 1.32 records, in its words (pkg/kubelet/events/event.go for
// the reasons; the messages from where kubelet records them: the image
// manager, kuberuntime's startContainer/killContainer/doBackOff, the node
// status setters). Kept in one place so the texts can be checked side by side.

import type { ObjectRef } from './correlator.js';

interface PodLike {
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export type ContainerKind = 'containers' | 'initContainers' | 'ephemeralContainers';

/** the Pod itself (pod-level events such as FailedCreatePodSandBox) */
export function podRef(pod: PodLike): ObjectRef {
  const m = pod.metadata;
  return { kind: 'Pod', namespace: m.namespace ?? 'default', name: m.name, uid: m.uid, apiVersion: 'v1', resourceVersion: m.resourceVersion };
}

/** a container of the pod: kubelet's GenerateContainerRef sets fieldPath `spec.<kind>{<name>}` */
export function containerRef(pod: PodLike, kind: ContainerKind, name: string): ObjectRef {
  return { ...podRef(pod), fieldPath: `spec.${kind}{${name}}` };
}

/** kubelet's nodeRef: kind Node, no namespace, and the node name as uid */
export function nodeRef(nodeName: string): ObjectRef {
  return { kind: 'Node', name: nodeName, uid: nodeName };
}

/** kubelet's format.Pod: `name_namespace(uid)` */
export const formatPod = (pod: PodLike) => `${pod.metadata.name}_${pod.metadata.namespace ?? 'default'}(${pod.metadata.uid ?? ''})`;

/** Go's time.Duration String() for a whole number of milliseconds: 0s, 313ms, 1.594s, 1m20s, 2h0m0s */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${neg ? '-' : ''}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const frac = rest % 1000;
  const secs = frac ? `${s}.${String(frac).padStart(3, '0').replace(/0+$/, '')}s` : `${s}s`;
  return `${neg ? '-' : ''}${h ? `${h}h${m}m` : m ? `${m}m` : ''}${secs}`;
}

export const msg = {
  pulling: (image: string) => `Pulling image ${JSON.stringify(image)}`,
  pulled: (image: string, tookMs: number, waitedMs: number, size: number) =>
    `Successfully pulled image ${JSON.stringify(image)} in ${goDuration(tookMs)} (${goDuration(waitedMs)} including waiting). Image size: ${size} bytes.`,
  present: (image: string) => `Container image ${JSON.stringify(image)} already present on machine`,
  neverPull: (image: string) => `Container image ${JSON.stringify(image)} is not present with pull policy of Never`,
  pullFailed: (image: string, err: string) => `Failed to pull image ${JSON.stringify(image)}: ${err}`,
  inspectFailed: (image: string, err: string) => `Failed to inspect image ${JSON.stringify(image)}: ${err}`,
  pullBackOff: (image: string) => `Back-off pulling image ${JSON.stringify(image)}`,
  /** kuberuntime's startContainer records every failure to create or start as `Error: <message>` */
  error: (message: string) => `Error: ${message}`,
  created: (container: string) => `Created container ${container}`,
  started: (container: string) => `Started container ${container}`,
  stopping: (container: string) => `Stopping container ${container}`,
  /** kuberuntime's computePodActions; `, will be restarted` follows unless restartPolicy is Never */
  probeKilling: (container: string, probe: 'liveness' | 'startup') => `Container ${container} failed ${probe} probe`,
  backOff: (container: string, pod: PodLike) => `Back-off restarting failed container ${container} in pod ${formatPod(pod)}`,
  /** the container's waiting message while in CrashLoopBackOff */
  backOffWaiting: (ms: number, container: string, pod: PodLike) => `back-off ${goDuration(ms)} restarting failed container=${container} pod=${formatPod(pod)}`,
  sandboxFailed: (err: string) => `Failed to create pod sandbox: ${err}`,
  /** kuberuntime's startContainer/executePreStopHook: the hook's own message is only logged (it may hold secrets) */
  postStartFailed: () => 'PostStartHook failed',
  preStopFailed: () => 'PreStopHook failed',
  starting: () => 'Starting kubelet.',
  nodeStatus: (node: string, event: string) => `Node ${node} status is now: ${event}`,
};

/** the node status setters' event when a condition takes a status (none for NetworkUnavailable, as kubelet) */
export function conditionEvent(type: string, status: string): string | undefined {
  const table: Record<string, [whenTrue: string, whenFalse: string]> = {
    Ready: ['NodeReady', 'NodeNotReady'],
    MemoryPressure: ['NodeHasInsufficientMemory', 'NodeHasSufficientMemory'],
    DiskPressure: ['NodeHasDiskPressure', 'NodeHasNoDiskPressure'],
    PIDPressure: ['NodeHasInsufficientPID', 'NodeHasSufficientPID'],
  };
  const row = table[type];
  if (!row || status === 'Unknown') return undefined;
  return status === 'True' ? row[0] : row[1];
}
