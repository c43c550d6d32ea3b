// The parts of a Pod's spec the node agent acts on (spec 002), and the labels
// it puts on the runtime's sandboxes and containers to find a pod's again.

import type { EnvContainer } from './container-env.js';
import type { ContainerKind } from './events/kubelet-events.js';
import type { Lifecycle } from './lifecycle-hooks.js';
import type { ProbeSpec } from './probes/types.js';

export const LABEL_POD_UID = 'io.orch.pod.uid';
export const LABEL_POD_NAME = 'io.orch.pod.name';
export const LABEL_POD_NAMESPACE = 'io.orch.pod.namespace';
export const LABEL_CONTAINER = 'io.orch.container.name';

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
  securityContext?: { seccompProfile?: SeccompField };
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
  securityContext?: { seccompProfile?: SeccompField; sysctls?: { name: string; value: string }[] };
  hostname?: string;
  activeDeadlineSeconds?: number;
  hostNetwork?: boolean;
}

/** kube's IsRestartableInitContainer: an init container with restartPolicy Always, a sidecar */
export const isSidecar = (c: { restartPolicy?: string }): boolean => c.restartPolicy === 'Always';

/** which list of the pod's spec declares the container (for an Event's fieldPath) */
export function kindOf(spec: PodSpec | undefined, name: string): ContainerKind {
  if (spec?.initContainers?.some((c) => c.name === name)) return 'initContainers';
  if (spec?.ephemeralContainers?.some((c) => c.name === name)) return 'ephemeralContainers';
  return 'containers';
}
