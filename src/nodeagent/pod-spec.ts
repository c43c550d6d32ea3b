// The parts of a Pod's spec the node agent acts on (spec 002), and the labels
// it puts on the runtime's sandboxes and containers to find a pod's again.

import type { EnvContainer } from './container-env.js';
import type { ContainerKind } from './events/kubelet-events.js';
import type { Lifecycle } from './lifecycle-hooks.js';
import type { ProbeSpec } from './probes/types.js';
import type { PodUserFields, UserFields } from './run-as-user.js';

export const LABEL_POD_UID = 'io.orch.pod.uid';
export const LABEL_POD_NAME = 'io.orch.pod.name';
export const LABEL_POD_NAMESPACE = 'io.orch.pod.namespace';
export const LABEL_CONTAINER = 'io.orch.container.name';
/** kubelet's container annotation: the hash of the container's definition it was created from */
export const CONTAINER_HASH_ANNOTATION = 'io.kubernetes.container.hash';

/**
 * The hash of a container's definition (kubelet's HashContainer): of its image, the one field of a
 * container the API lets change (ValidatePodUpdate); a running container created from another
 * definition is restarted, and a changed container's restart does not wait out the old back-off.
 */
export function containerHash(c: { name: string; image?: string }): string {
  // FNV-1a, 32 bits, as kubelet's hash is
  let h = 0x811c9dc5;
  for (const ch of `${c.name}\0${c.image ?? ''}`) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16);
}

interface SeccompField {
  type?: string;
  localhostProfile?: string;
}
export interface ContainerSpec {
  name: string;
  image: string;
  imagePullPolicy?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvContainer['env'];
  envFrom?: EnvContainer['envFrom'];
  /** the user fields: run-as-user.ts */
  securityContext?: { seccompProfile?: SeccompField } & UserFields;
  resources?: { limits?: Record<string, string>; requests?: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string; subPath?: string; subPathExpr?: string; readOnly?: boolean }[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  startupProbe?: ProbeSpec;
  livenessProbe?: ProbeSpec;
  readinessProbe?: ProbeSpec;
  lifecycle?: Lifecycle;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  /** only `Always`, only on init containers: a sidecar (KEP-753, sidecars.ts) */
  restartPolicy?: 'Always';
}
export interface PodSpec {
  containers: ContainerSpec[];
  initContainers?: ContainerSpec[];
  /** `targetContainerName` is not used: the simulated runtime shares no process namespace (docs/nodeagent.md) */
  ephemeralContainers?: ContainerSpec[];
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  securityContext?: { seccompProfile?: SeccompField; sysctls?: { name: string; value: string }[] } & PodUserFields;
  hostname?: string;
  activeDeadlineSeconds?: number;
  hostNetwork?: boolean;
  /** conditions others set that must be True for the pod to be Ready (pod-conditions.ts) */
  readinessGates?: { conditionType?: string }[];
  /** the pod's /etc/hosts (etc-hosts.ts) */
  subdomain?: string;
  hostAliases?: { ip?: string; hostnames?: string[] }[];
}

/** kube's IsRestartableInitContainer: an init container with restartPolicy Always, a sidecar */
export const isSidecar = (c: { restartPolicy?: string }): boolean => c.restartPolicy === 'Always';

/** which list of the pod's spec declares the container (for an Event's fieldPath) */
export function kindOf(spec: PodSpec | undefined, name: string): ContainerKind {
  if (spec?.initContainers?.some((c) => c.name === name)) return 'initContainers';
  if (spec?.ephemeralContainers?.some((c) => c.name === name)) return 'ephemeralContainers';
  return 'containers';
}
