// The parts of a pod (or a pod template) the Pod Security checks read, as
// typed views of the stored JSON, and the wording helpers every check's
// message shares (kube's quoted, comma-joined names and singular/plural).

export interface SecurityContext {
  privileged?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  runAsNonRoot?: boolean | null;
  runAsUser?: number | null;
  procMount?: string | null;
  capabilities?: { add?: string[] | null; drop?: string[] | null } | null;
  seccompProfile?: { type?: string } | null;
  seLinuxOptions?: SELinuxOptions | null;
  windowsOptions?: { hostProcess?: boolean | null } | null;
  appArmorProfile?: { type?: string } | null;
}

export interface SELinuxOptions {
  type?: string;
  user?: string;
  role?: string;
}

export interface PodSecurityContext extends Omit<SecurityContext, 'privileged' | 'allowPrivilegeEscalation' | 'procMount' | 'capabilities'> {
  sysctls?: { name?: string }[] | null;
}

export interface Container {
  name?: string;
  image?: string;
  ports?: { hostPort?: number | null }[] | null;
  securityContext?: SecurityContext | null;
}

export interface PodSpec {
  hostNetwork?: boolean | null;
  hostPID?: boolean | null;
  hostIPC?: boolean | null;
  os?: { name?: string } | null;
  securityContext?: PodSecurityContext | null;
  volumes?: Record<string, unknown>[] | null;
  initContainers?: Container[] | null;
  containers?: Container[] | null;
  ephemeralContainers?: Container[] | null;
  runtimeClassName?: string | null;
}

export interface PodMeta {
  annotations?: Record<string, string> | null;
}

/** a check's refusal: kube's ForbiddenReason and ForbiddenDetail */
export interface Violation {
  reason: string;
  detail: string;
}

/** a check: undefined when the pod passes */
export type CheckFn = (meta: PodMeta, spec: PodSpec) => Violation | undefined;

/** init containers, containers, then ephemeral containers (kube's visiting order) */
export function allContainers(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

export function isWindows(spec: PodSpec): boolean {
  return spec.os?.name === 'windows';
}

/** `"a", "b"` */
export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : items.map((s) => `"${s}"`).join(', ');
}

export function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"` */
export function containerList(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** a deduplicated, byte-order sorted list (kube's sets.String.List) */
export function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
