// How kubelet 1.32 reports init containers (docs/nodeagent.md "Pods"; kube's
// e2e init_container.go checks all three): a container not created yet waits
// with reason PodInitializing in a pod that has init containers
// (convertToAPIContainerStatuses' default waiting state, for init and app
// containers alike); an init container that exited 0 is Ready (the prober
// manager's UpdatePodStatus); and the Initialized condition is kube's
// GeneratePodInitializedCondition (pkg/kubelet/status/generate.go), where a
// sidecar (restartable init container) counts as done once it has started.

/** the API's container status, as far as these rules read it */
export interface ReportedContainer {
  name?: unknown;
  state?: unknown;
  started?: unknown;
}
interface ReportedState {
  running?: unknown;
  terminated?: { exitCode?: number };
}

const stateOf = (s: ReportedContainer): ReportedState => (s.state ?? {}) as ReportedState;

/** the waiting reason of a container that has not been created */
export const defaultWaitingReason = (hasInitContainers: boolean): string => (hasInitContainers ? 'PodInitializing' : 'ContainerCreating');

/** a (non-restartable) init container is ready once it has exited 0 */
export const initContainerReady = (s: ReportedContainer): boolean => stateOf(s).terminated?.exitCode === 0;

export interface PodCondition {
  type: 'Initialized';
  status: 'True' | 'False';
  reason?: string;
  message?: string;
}

/**
 * kubelet's Initialized condition: True with reason PodCompleted for a
 * Succeeded pod; True once any app container has started (running or
 * terminated); else False, ContainersNotInitialized, `containers with
 * incomplete status: [a b]` naming every init container not yet ready — a
 * sidecar (named in `sidecars`) not yet started
 */
export function initializedCondition(inits: readonly ReportedContainer[], apps: readonly ReportedContainer[], phase: string, sidecars: ReadonlySet<string> = new Set()): PodCondition {
  if (phase === 'Succeeded') return { type: 'Initialized', status: 'True', reason: 'PodCompleted' };
  if (apps.some((s) => stateOf(s).running !== undefined || stateOf(s).terminated !== undefined)) return { type: 'Initialized', status: 'True' };
  const done = (s: ReportedContainer) => (sidecars.has(String(s.name)) ? s.started === true : initContainerReady(s));
  const incomplete = inits.filter((s) => !done(s)).map((s) => String(s.name));
  if (incomplete.length === 0) return { type: 'Initialized', status: 'True' };
  return { type: 'Initialized', status: 'False', reason: 'ContainersNotInitialized', message: `containers with incomplete status: [${incomplete.join(' ')}]` };
}
