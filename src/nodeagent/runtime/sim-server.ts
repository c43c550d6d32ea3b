// `orch runtime-sim --socket <path>`: the simulated container runtime served
// over a Unix socket with the RuntimeService and ImageService of
// proto/runtime.proto, plus the SimControl service for fault injection.
// Faults: SetFaults over gRPC, or ORCH_RUNTIME_SIM_FAULTS="Method=code:message,..." at start.

import { mkdir, rm, writeFile, chmod } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { methodNames, serviceDefinition } from './proto.js';
import { killProcessTree } from './sim-process.js';
import { containerStats, readProcesses } from './sim-stats.js';
import { type Clock, systemClock } from '../clock.js';
import { SimError, SimState } from './sim-state.js';
import { execSync } from './sim-exec.js';
import { attachStream, containerLog, execStream, portForwardStream } from './sim-streams.js';
import { tarArchive } from './tar.js';
import type { Container, ContainerState, PodSandbox } from './types.js';

type Req = Record<string, unknown> & { filter?: Record<string, unknown> };
type Handler = (req: Req) => object | Promise<object>;

export interface Fault {
  method: string;
  code: number;
  message: string;
}

export function parseFaultsEnv(v: string | undefined): Fault[] {
  if (!v) return [];
  return v.split(',').filter(Boolean).map((item) => {
    const m = /^(\w+)=(\d+)(?::(.*))?$/.exec(item.trim());
    if (!m) throw new Error(`ORCH_RUNTIME_SIM_FAULTS: "${item}" is not Method=code[:message]`);
    return { method: m[1]!, code: Number(m[2]), message: m[3] ?? 'injected fault' };
  });
}

export const SIM_RUNTIME_NAME = 'orch-runtime-sim';
export const SIM_RUNTIME_VERSION = '0.1.0';

function runtimeHandlers(state: SimState): Record<string, Handler> {
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const sandboxView = (id: string): PodSandbox => {
    const s = state.sandbox(id);
    return { id: s.id, metadata: s.config.metadata, state: s.state, createdAt: s.createdAt, labels: s.config.labels ?? {}, annotations: s.config.annotations ?? {} };
  };
  const matches = (labels: Record<string, string>, sel: unknown) =>
    Object.entries((sel ?? {}) as Record<string, string>).every(([k, v]) => labels[k] === v);
  return {
    Version: () => ({ version: '0.1.0', runtimeName: SIM_RUNTIME_NAME, runtimeVersion: SIM_RUNTIME_VERSION, runtimeApiVersion: 'v1' }),
    Status: () => ({
      status: {
        conditions: [
          { type: 'RuntimeReady', status: true, reason: '', message: '' },
          { type: 'NetworkReady', status: true, reason: '', message: '' },
        ],
      },
    }),
    RunPodSandbox: (r) => ({ podSandboxId: state.runSandbox(r.config as never) }),
    StopPodSandbox: (r) => (state.stopSandbox(str(r.podSandboxId)), {}),
    RemovePodSandbox: (r) => (state.removeSandbox(str(r.podSandboxId)), {}),
    PodSandboxStatus: (r) => {
      const id = str(r.podSandboxId);
      const sb = state.sandbox(id);
      return { status: { ...sandboxView(id), network: { ip: sb.ip, hostReachableIp: sb.loopback } } };
    },
    ListPodSandbox: (r) => ({
      items: [...state.sandboxes.keys()]
        .map(sandboxView)
        .filter((s) => (!r.filter?.id || s.id === r.filter.id) && matches(s.labels, r.filter?.labelSelector)),
    }),
    CreateContainer: (r) => ({ containerId: state.createContainer(str(r.podSandboxId), r.config as never) }),
    StartContainer: (r) => (state.startContainer(str(r.containerId)), {}),
    StopContainer: async (r) => (await state.stopWithin(state.container(str(r.containerId)), Number(r.timeout ?? 0)), {}),
    RemoveContainer: (r) => (state.removeContainer(str(r.containerId)), {}),
    ContainerStatus: (r) => ({ status: state.containerStatus(str(r.containerId)) }),
    ListContainers: (r) => {
      const f = r.filter ?? {};
      const wantState = (f.state as { state?: ContainerState } | null)?.state;
      const out: Container[] = [];
      for (const c of state.containers.values()) {
        if (f.id && c.id !== f.id) continue;
        if (f.podSandboxId && c.sandboxId !== f.podSandboxId) continue;
        if (wantState && c.state !== wantState) continue;
        if (!matches(c.config.labels ?? {}, f.labelSelector)) continue;
        const s = state.containerStatus(c.id);
        out.push({ id: c.id, podSandboxId: c.sandboxId, metadata: s.metadata, image: s.image, imageRef: s.imageRef, state: s.state, createdAt: s.createdAt, labels: s.labels, annotations: s.annotations });
      }
      return { containers: out };
    },
    ExecSync: execSync(state),
    // sim-stats.ts: real figures for real processes, small deterministic ones for pretended ones
    ContainerStats: async (r) => {
      const c = state.container(str(r.containerId));
      return { stats: containerStats(c, state.clock.now() * 1_000_000, c.proc ? await readProcesses() : undefined) };
    },
    ListContainerStats: async (r) => {
      const f = r.filter ?? {};
      const list = [...state.containers.values()].filter(
        (c) => (!f.id || c.id === f.id) && (!f.podSandboxId || c.sandboxId === f.podSandboxId) && matches(c.config.labels ?? {}, f.labelSelector),
      );
      const procs = list.some((c) => c.proc) ? await readProcesses() : undefined;
      const now = state.clock.now() * 1_000_000;
      return { stats: list.map((c) => containerStats(c, now, procs)) };
    },
    CheckpointContainer: async (r) => {
      const c = state.container(str(r.containerId));
      if (c.state !== 'CONTAINER_RUNNING') throw new SimError(9, `container ${c.id} is not running`);
      const location = str(r.location);
      if (!location.startsWith('/')) throw new SimError(3, 'checkpoint location must be an absolute path');
      const spec = JSON.stringify({ id: c.id, sandbox: c.sandboxId, config: c.config, startedAt: c.startedAt }, null, 2);
      // "memory pages" of the simulated process: deterministic bytes of its memory size (capped)
      const pages = Buffer.alloc(Math.min(c.memoryBytes, 64 * 1024), 0xab);
      const archive = tarArchive(
        [
          { name: 'config.dump', content: Buffer.from(spec) },
          { name: 'spec.dump', content: Buffer.from(JSON.stringify({ ociVersion: '1.0.2', process: { args: [...(c.config.command ?? []), ...(c.config.args ?? [])] } })) },
          { name: 'checkpoint/pages-1.img', content: pages },
        ],
        Math.floor(state.clock.now() / 1000),
      );
      await mkdir(dirname(location), { recursive: true, mode: 0o700 });
      // spec 002 §1: archives readable by the owner only
      await writeFile(location, archive, { mode: 0o600 });
      await chmod(location, 0o600);
      return {};
    },
  };
}

function imageHandlers(state: SimState): Record<string, Handler> {
  const image = (r: Req) => ((r.image as { image?: string } | null)?.image ?? '');
  return {
    PullImage: (r) => ({ imageRef: state.pullImage(image(r)) }),
    ListImages: () => ({ images: [...state.images.values()] }),
    ImageStatus: (r) => ({ image: state.images.get(image(r)) ?? null }),
  };
}

function implementation(
  handlers: Record<string, Handler>,
  service: string,
  faults: Map<string, Fault>,
  streams: Record<string, grpc.UntypedHandleCall> = {},
): grpc.UntypedServiceImplementation {
  const impl: grpc.UntypedServiceImplementation = {};
  for (const name of methodNames(service)) {
    const s = streams[name];
    if (s) {
      // streaming calls: an injected fault fails the call before it starts
      impl[name] = ((call: grpc.ServerWritableStream<Req, object>) => {
        const f = faults.get(name);
        if (f) {
          call.emit('error', { code: f.code, details: f.message, message: f.message });
          return;
        }
        (s as (c: typeof call) => void)(call);
      }) as grpc.UntypedHandleCall;
      continue;
    }
    const h = handlers[name];
    impl[name] = (call: grpc.ServerUnaryCall<Req, object>, cb: grpc.sendUnaryData<object>) => {
      const f = faults.get(name);
      if (f) return cb({ code: f.code, details: f.message, message: f.message } as grpc.ServiceError, null);
      if (!h) return cb({ code: grpc.status.UNIMPLEMENTED, details: `${name} not implemented` } as grpc.ServiceError, null);
      Promise.resolve()
        .then(() => h(call.request))
        .then(
          (res) => cb(null, res),
          (e: unknown) => {
            const code = e instanceof SimError ? e.code : grpc.status.INTERNAL;
            cb({ code, details: (e as Error).message } as grpc.ServiceError, null);
          },
        );
    };
  }
  return impl;
}

export interface RunningSim {
  socket: string;
  state: SimState;
  setFaults(f: Fault[]): void;
  stop(): Promise<void>;
}

/** `clock`: the agent's port (../clock.ts) for the simulated runtime's times and exits */
export async function startRuntimeSim(socket: string, initialFaults: Fault[] = [], clock: Clock = systemClock): Promise<RunningSim> {
  const state = new SimState(clock);
  const faults = new Map<string, Fault>(initialFaults.map((f) => [f.method, f]));
  const server = new grpc.Server();
  server.addService(
    serviceDefinition('RuntimeService'),
    implementation(runtimeHandlers(state), 'RuntimeService', faults, {
      ContainerLog: containerLog(state) as grpc.UntypedHandleCall,
      ExecStream: execStream(state) as grpc.UntypedHandleCall,
      AttachStream: attachStream(state) as grpc.UntypedHandleCall,
      PortForwardStream: portForwardStream(state) as grpc.UntypedHandleCall,
    }),
  );
  server.addService(serviceDefinition('ImageService'), implementation(imageHandlers(state), 'ImageService', faults));
  const control: Record<string, Handler> = {
    SetFaults: (r) => {
      faults.clear();
      for (const f of (r.faults ?? []) as Fault[]) faults.set(f.method, f);
      return {};
    },
    ExitContainer: (r) => {
      const c = state.container(String(r.containerId));
      state.exit(c, Number(r.exitCode), Number(r.exitCode) === 0 ? 'Completed' : 'Error');
      return {};
    },
  };
  server.addService(serviceDefinition('SimControl'), implementation(control, 'SimControl', new Map()));
  await mkdir(dirname(socket), { recursive: true });
  await rm(socket, { force: true });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  );
  return {
    socket,
    state,
    setFaults(f) {
      faults.clear();
      for (const x of f) faults.set(x.method, x);
    },
    async stop() {
      for (const c of state.containers.values()) {
        state.cancelExit(c);
        if (c.proc) killProcessTree(c.proc, 'SIGKILL');
        c.service?.stop();
      }
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      await rm(socket, { force: true });
    },
  };
}
