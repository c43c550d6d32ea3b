// TypeScript shapes of the proto/runtime.proto messages the agent and the
// simulator use (camelCase, enums by name, int64 as number; see proto.ts).

export type Labels = Record<string, string>;

/**
 * kubelet's container annotation with the container's ports as JSON
 * (`[{"name":"http","containerPort":80,"protocol":"TCP"}]`); the simulator
 * reads it to know where an emulated image listens (sim-nginx.ts)
 */
export const CONTAINER_PORTS_ANNOTATION = 'io.kubernetes.container.ports';

export interface VersionResponse {
  version: string;
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}
export interface RuntimeCondition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}
export interface StatusResponse {
  status: { conditions: RuntimeCondition[] } | null;
}

export type SecurityProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost';
export interface SecurityProfile {
  profileType: SecurityProfileType;
  localhostRef?: string;
  profileJson?: string;
}

export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  attempt: number;
}
export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  logDirectory?: string;
  labels?: Labels;
  annotations?: Labels;
  /** `sysctls`: the pod's sysctls by dotted name (kubelet's generatePodSandboxLinuxConfig) */
  linux?: { securityContext?: { seccomp?: SecurityProfile }; sysctls?: Labels };
}

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';
export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
}
export interface PodSandboxStatus extends PodSandbox {
  /** `hostReachableIp`: not CRI; where the node reaches the sandbox's network (proto/runtime.proto) */
  network: { ip: string; hostReachableIp?: string } | null;
}

/** CRI's Mount: what the container sees at `containerPath` is the host's `hostPath` */
export interface Mount {
  containerPath: string;
  hostPath: string;
  readonly?: boolean;
}

export type ContainerState = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';
export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  image: { image: string };
  command?: string[];
  args?: string[];
  workingDir?: string;
  envs?: { key: string; value: string }[];
  mounts?: Mount[];
  labels?: Labels;
  annotations?: Labels;
  logPath?: string;
  linux?: {
    resources?: { cpuPeriod?: number; cpuQuota?: number; cpuShares?: number; memoryLimitInBytes?: number };
    securityContext?: LinuxContainerSecurityContext;
  };
}
/** CRI's Int64Value: a number whose absence (null) differs from 0 */
export interface Int64Value {
  value: number;
}
/** the container's user and seccomp profile (proto/runtime.proto LinuxContainerSecurityContext) */
export interface LinuxContainerSecurityContext {
  seccomp?: SecurityProfile;
  runAsUser?: Int64Value | null;
  runAsUsername?: string;
  runAsGroup?: Int64Value | null;
  supplementalGroups?: number[];
}
export interface Container {
  id: string;
  podSandboxId: string;
  metadata: { name: string; attempt: number };
  image: { image: string } | null;
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: Labels;
  annotations: Labels;
}
export interface ContainerStatus {
  id: string;
  metadata: { name: string; attempt: number };
  state: ContainerState;
  /** nanoseconds since the epoch; 0 = not yet */
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  image: { image: string } | null;
  imageRef: string;
  reason: string;
  message: string;
  labels: Labels;
  annotations: Labels;
}
/** CRI's ContainerStats (proto/runtime.proto): times in ns since the epoch */
export interface ContainerStats {
  attributes: { id: string; metadata: { name: string; attempt: number } | null; labels: Labels; annotations: Labels } | null;
  cpu: { timestamp: number; usageCoreNanoSeconds: { value: number } | null } | null;
  memory: { timestamp: number; workingSetBytes: { value: number } | null } | null;
}
export interface ExecSyncResponse {
  stdout: Buffer;
  stderr: Buffer;
  exitCode: number;
}
export interface Image {
  id: string;
  repoTags: string[];
  repoDigests: string[];
  size: number;
  /** the image's numeric user; `username` a non-numeric one; neither: no USER (root) */
  uid?: Int64Value | null;
  username?: string;
}

// streams (proto/runtime.proto ContainerLog, ExecStream, AttachStream, PortForwardStream)
export interface ContainerLogRequest {
  containerId: string;
  follow?: boolean;
  /** negative = all */
  tailLines?: number;
  /** ns since the epoch; 0 = all */
  sinceTime?: number;
}
export interface ContainerLogChunk {
  /** ns since the epoch */
  timestamp: number;
  stream: 'stdout' | 'stderr';
  data: Buffer;
}
export interface StreamInput {
  start?: { containerId: string; cmd?: string[]; tty?: boolean; stdin?: boolean; stdout?: boolean; stderr?: boolean };
  stdin?: Uint8Array;
  stdinClose?: boolean;
  resize?: { width: number; height: number };
}
export interface StreamOutput {
  stdout: Buffer;
  stderr: Buffer;
  exited: boolean;
  exitCode: number;
}
export interface PortForwardFrame {
  podSandboxId?: string;
  port?: number;
  data?: Uint8Array;
  close?: boolean;
}
