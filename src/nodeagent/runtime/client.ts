// The agent's only way to the container runtime (spec 002 §4.2): a gRPC client
// of proto/runtime.proto over the Unix sockets `containerRuntimeEndpoint` and
// `imageServiceEndpoint`. Every call has a deadline; failures surface as a
// RuntimeCallError carrying the gRPC status code.

import { type Clock, systemClock } from '../clock.js';
import * as grpc from '@grpc/grpc-js';
import { serviceDefinition } from './proto.js';
import type {
  Container,
  ContainerConfig,
  ContainerLogChunk,
  ContainerLogRequest,
  PortForwardFrame,
  StreamInput,
  StreamOutput,
  ContainerState,
  ContainerStats,
  ContainerStatus,
  ExecSyncResponse,
  Image,
  PodSandbox,
  PodSandboxConfig,
  PodSandboxStatus,
  StatusResponse,
  VersionResponse,
} from './types.js';

export class RuntimeCallError extends Error {
  constructor(
    readonly method: string,
    readonly code: grpc.status,
    readonly details: string,
  ) {
    super(`runtime ${method}: ${grpc.status[code] ?? code}: ${details}`);
  }
  /** how a Go client prints it (kubelet's pull errors): `rpc error: code = NotFound desc = …` */
  get goError(): string {
    const name = (grpc.status[this.code] ?? String(this.code)).toLowerCase().replace(/(^|_)([a-z])/g, (_m, _s: string, c: string) => c.toUpperCase());
    return `rpc error: code = ${name.replace(/^Ok$/, 'OK')} desc = ${this.details}`;
  }
  get unimplemented(): boolean {
    return this.code === grpc.status.UNIMPLEMENTED;
  }
}

/** `unix:///run/x.sock`, `unix:/run/x.sock` or a plain path → the grpc-js target */
export function socketTarget(endpoint: string): string {
  if (endpoint.startsWith('unix://')) return `unix:${endpoint.slice('unix://'.length)}`;
  if (endpoint.startsWith('unix:')) return endpoint;
  return `unix:${endpoint}`;
}

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: object) => void) => void;
type ServerStreaming = (req: object, md: grpc.Metadata, opts: grpc.CallOptions) => grpc.ClientReadableStream<object>;
type Bidi = (md: grpc.Metadata, opts: grpc.CallOptions) => grpc.ClientDuplexStream<object, object>;

function makeClient(service: string, endpoint: string): grpc.Client & Record<string, Unary> {
  const Ctor = grpc.makeGenericClientConstructor(serviceDefinition(service), service);
  return new Ctor(socketTarget(endpoint), grpc.credentials.createInsecure()) as unknown as grpc.Client & Record<string, Unary>;
}

export class RuntimeClient {
  private readonly runtime: grpc.Client & Record<string, Unary>;
  private readonly images: grpc.Client & Record<string, Unary>;

  constructor(
    runtimeEndpoint: string,
    imageEndpoint: string = runtimeEndpoint,
    private readonly timeoutMs = 10_000,
    /** gRPC deadlines are absolute: counted from the agent's clock (../clock.ts) */
    private readonly clock: Clock = systemClock,
  ) {
    this.runtime = makeClient('RuntimeService', runtimeEndpoint);
    this.images = makeClient('ImageService', imageEndpoint);
  }

  close(): void {
    this.runtime.close();
    this.images.close();
  }

  private call<T>(client: Record<string, Unary>, method: string, req: object, timeoutMs = this.timeoutMs): Promise<T> {
    return new Promise((resolve, reject) => {
      client[method]!.call(client, req, new grpc.Metadata(), { deadline: this.clock.now() + timeoutMs }, (err, res) => {
        if (err) reject(new RuntimeCallError(method, err.code, err.details || err.message));
        else resolve(res as T);
      });
    });
  }

  version(): Promise<VersionResponse> {
    return this.call(this.runtime, 'Version', { version: 'v1' });
  }
  status(): Promise<StatusResponse> {
    return this.call(this.runtime, 'Status', {});
  }
  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    return (await this.call<{ podSandboxId: string }>(this.runtime, 'RunPodSandbox', { config })).podSandboxId;
  }
  async stopPodSandbox(id: string): Promise<void> {
    await this.call(this.runtime, 'StopPodSandbox', { podSandboxId: id });
  }
  async removePodSandbox(id: string): Promise<void> {
    await this.call(this.runtime, 'RemovePodSandbox', { podSandboxId: id });
  }
  async podSandboxStatus(id: string): Promise<PodSandboxStatus> {
    return (await this.call<{ status: PodSandboxStatus }>(this.runtime, 'PodSandboxStatus', { podSandboxId: id })).status;
  }
  async listPodSandbox(labelSelector: Record<string, string> = {}): Promise<PodSandbox[]> {
    return (await this.call<{ items: PodSandbox[] }>(this.runtime, 'ListPodSandbox', { filter: { labelSelector } })).items;
  }
  async createContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig): Promise<string> {
    return (await this.call<{ containerId: string }>(this.runtime, 'CreateContainer', { podSandboxId, config, sandboxConfig })).containerId;
  }
  async startContainer(id: string): Promise<void> {
    await this.call(this.runtime, 'StartContainer', { containerId: id });
  }
  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    await this.call(this.runtime, 'StopContainer', { containerId: id, timeout: timeoutSeconds }, this.timeoutMs + timeoutSeconds * 1000);
  }
  async removeContainer(id: string): Promise<void> {
    await this.call(this.runtime, 'RemoveContainer', { containerId: id });
  }
  async containerStatus(id: string): Promise<ContainerStatus> {
    return (await this.call<{ status: ContainerStatus }>(this.runtime, 'ContainerStatus', { containerId: id })).status;
  }
  async listContainers(filter: { podSandboxId?: string; state?: ContainerState } = {}): Promise<Container[]> {
    const f = { podSandboxId: filter.podSandboxId ?? '', ...(filter.state ? { state: { state: filter.state } } : {}) };
    return (await this.call<{ containers: Container[] }>(this.runtime, 'ListContainers', { filter: f })).containers;
  }
  async containerStats(id: string): Promise<ContainerStats> {
    return (await this.call<{ stats: ContainerStats }>(this.runtime, 'ContainerStats', { containerId: id })).stats;
  }
  /** every container's stats (CRI ListContainerStats), optionally of one sandbox */
  async listContainerStats(filter: { podSandboxId?: string } = {}): Promise<ContainerStats[]> {
    return (await this.call<{ stats: ContainerStats[] }>(this.runtime, 'ListContainerStats', { filter: { podSandboxId: filter.podSandboxId ?? '' } })).stats;
  }
  /**
   * runs `cmd` in the container and waits for it (exec probes). As kubelet's
   * remote runtime: the call's deadline is the command's timeout plus the
   * request timeout, so the runtime answers DEADLINE_EXCEEDED itself first.
   */
  async execSync(id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse> {
    // timeout 0 (lifecycle hooks): no deadline at all, as kubelet's remote runtime ("Do not set timeout when timeout is 0")
    const deadline = timeoutSeconds > 0 ? this.timeoutMs + timeoutSeconds * 1000 : Infinity;
    return this.call<ExecSyncResponse>(this.runtime, 'ExecSync', { containerId: id, cmd, timeout: timeoutSeconds }, deadline);
  }
  /** timeoutSeconds 0 = the runtime's default (spec 002 §4.1) */
  async checkpointContainer(id: string, location: string, timeoutSeconds: number): Promise<void> {
    const deadline = (timeoutSeconds > 0 ? timeoutSeconds * 1000 : 0) + this.timeoutMs * 6;
    await this.call(this.runtime, 'CheckpointContainer', { containerId: id, location, timeout: timeoutSeconds }, deadline);
  }
  // Streams (proto/runtime.proto, docs/nodeagent.md "Streams"): no deadline, they live as long as the
  // client's request; cancel() ends them.

  /** the container's log lines; with `follow`, until the container's process ends */
  containerLog(req: ContainerLogRequest): grpc.ClientReadableStream<ContainerLogChunk> {
    const m = this.runtime['ContainerLog'] as unknown as ServerStreaming;
    return m.call(this.runtime, req, new grpc.Metadata(), {}) as grpc.ClientReadableStream<ContainerLogChunk>;
  }
  /** a command in the container: write `{ start }` first, then stdin, `stdinClose`, `resize` */
  execStream(): grpc.ClientDuplexStream<StreamInput, StreamOutput> {
    return (this.runtime['ExecStream'] as unknown as Bidi).call(this.runtime, new grpc.Metadata(), {}) as grpc.ClientDuplexStream<StreamInput, StreamOutput>;
  }
  /** the container's own process: its output from now on, and its stdin */
  attachStream(): grpc.ClientDuplexStream<StreamInput, StreamOutput> {
    return (this.runtime['AttachStream'] as unknown as Bidi).call(this.runtime, new grpc.Metadata(), {}) as grpc.ClientDuplexStream<StreamInput, StreamOutput>;
  }
  /** one connection to a port of a sandbox: write `{ podSandboxId, port }` first, then data */
  portForwardStream(): grpc.ClientDuplexStream<PortForwardFrame, PortForwardFrame> {
    return (this.runtime['PortForwardStream'] as unknown as Bidi).call(this.runtime, new grpc.Metadata(), {}) as grpc.ClientDuplexStream<PortForwardFrame, PortForwardFrame>;
  }

  async pullImage(image: string): Promise<string> {
    return (await this.call<{ imageRef: string }>(this.images, 'PullImage', { image: { image } }, this.timeoutMs * 6)).imageRef;
  }
  async listImages(): Promise<Image[]> {
    return (await this.call<{ images: Image[] }>(this.images, 'ListImages', {})).images;
  }
  async imageStatus(image: string): Promise<Image | null> {
    const r = await this.call<{ image: Image | null }>(this.images, 'ImageStatus', { image: { image } });
    return r.image && r.image.id ? r.image : null;
  }
}

/** the simulator's fault-injection service (tests only) */
export class SimControlClient {
  private readonly client: grpc.Client & Record<string, Unary>;
  constructor(
    endpoint: string,
    private readonly clock: Clock = systemClock,
  ) {
    this.client = makeClient('SimControl', endpoint);
  }
  private call(method: string, req: object): Promise<void> {
    return new Promise((resolve, reject) => {
      this.client[method]!.call(this.client, req, new grpc.Metadata(), { deadline: this.clock.now() + 10_000 }, (err) => (err ? reject(err) : resolve()));
    });
  }
  setFaults(faults: { method: string; code: number; message: string }[]): Promise<void> {
    return this.call('SetFaults', { faults });
  }
  exitContainer(containerId: string, exitCode: number): Promise<void> {
    return this.call('ExitContainer', { containerId, exitCode });
  }
  close(): void {
    this.client.close();
  }
}
