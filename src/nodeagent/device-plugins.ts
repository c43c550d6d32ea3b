// Device plugins (spec 002 §4.2, §9): the Registration service on
// `<root-dir>/device-plugins/nodeagent.sock` (device plugin API v1beta1,
// proto/deviceplugin.proto). A registered plugin is asked for its devices
// with ListAndWatch; its resource then appears in the Node's capacity (all
// devices) and allocatable (healthy devices). The registered devices are
// kept in `nodeagent_internal_checkpoint` so they survive an agent restart;
// until the plugin registers again they count in capacity but not allocatable.

import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { protoService } from './runtime/proto.js';

export const REGISTRATION_SOCKET = 'nodeagent.sock';
export const CHECKPOINT_FILE = 'nodeagent_internal_checkpoint';
export const SUPPORTED_VERSIONS = ['v1beta1'];

interface Resource {
  devices: Map<string, string>;
  connected: boolean;
  stream?: grpc.ClientReadableStream<{ devices: { ID: string; health: string }[] }>;
  client?: grpc.Client;
}

interface CheckpointData {
  PodDeviceEntries: unknown[] | null;
  RegisteredDevices: Record<string, string[]>;
}

function fnv32a(s: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(s)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** an extended resource name: `<domain>/<name>` outside the kubernetes.io and orch.io namespaces */
function validResourceName(n: string): boolean {
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+)\/([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/.exec(n);
  if (!m) return false;
  return !/(^|\.)kubernetes\.io$/.test(m[1]!) && !/(^|\.)orch\.io$/.test(m[1]!);
}

export class DevicePluginRegistry {
  private readonly resources = new Map<string, Resource>();
  private server?: grpc.Server;

  constructor(
    private readonly dir: string,
    private readonly log: (m: string) => void,
    private readonly onChange: () => void,
  ) {}

  /** name → { capacity, allocatable } */
  capacity(): Record<string, { capacity: number; allocatable: number }> {
    const out: Record<string, { capacity: number; allocatable: number }> = {};
    for (const [name, r] of this.resources) {
      const healthy = r.connected ? [...r.devices.values()].filter((h) => h === 'Healthy').length : 0;
      out[name] = { capacity: r.devices.size, allocatable: healthy };
    }
    return out;
  }

  async start(): Promise<void> {
    await this.loadCheckpoint();
    const server = new grpc.Server();
    server.addService(protoService('deviceplugin.proto', 'v1beta1', 'Registration'), {
      Register: (call: grpc.ServerUnaryCall<{ version: string; endpoint: string; resourceName: string }, object>, cb: grpc.sendUnaryData<object>) => {
        const r = call.request;
        const bad = (m: string) => cb({ code: grpc.status.INVALID_ARGUMENT, details: m } as grpc.ServiceError, null);
        if (!SUPPORTED_VERSIONS.includes(r.version)) return bad(`unsupported device plugin API version "${r.version}" (supported: ${SUPPORTED_VERSIONS.join(', ')})`);
        if (!validResourceName(r.resourceName)) return bad(`invalid extended resource name "${r.resourceName}": must be <domain>/<name> outside kubernetes.io and orch.io`);
        if (!r.endpoint || r.endpoint.includes('/') || r.endpoint === REGISTRATION_SOCKET) return bad(`invalid endpoint "${r.endpoint}": a socket file name in ${this.dir}`);
        this.connect(r.resourceName, r.endpoint);
        this.log(`device plugin for ${r.resourceName} registered (endpoint ${r.endpoint})`);
        cb(null, {});
      },
    });
    const sock = join(this.dir, REGISTRATION_SOCKET);
    await rm(sock, { force: true });
    await new Promise<void>((resolve, reject) => server.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
    this.server = server;
  }

  private connect(name: string, endpoint: string): void {
    const old = this.resources.get(name);
    old?.stream?.cancel();
    old?.client?.close();
    const Ctor = grpc.makeGenericClientConstructor(protoService('deviceplugin.proto', 'v1beta1', 'DevicePlugin'), 'DevicePlugin');
    const client = new Ctor(`unix:${join(this.dir, endpoint)}`, grpc.credentials.createInsecure());
    const res: Resource = { devices: old?.devices ?? new Map(), connected: true, client };
    this.resources.set(name, res);
    const stream = (client as unknown as Record<string, (req: object) => Resource['stream']>).ListAndWatch!.call(client, {})!;
    res.stream = stream;
    stream.on('data', (msg: { devices: { ID: string; health: string }[] }) => {
      res.devices = new Map(msg.devices.map((d) => [d.ID, d.health]));
      res.connected = true;
      void this.saveCheckpoint().finally(() => this.onChange());
    });
    const lost = () => {
      if (this.resources.get(name) !== res || !res.connected) return;
      res.connected = false;
      this.log(`device plugin for ${name} disconnected; its devices are unallocatable until it registers again`);
      this.onChange();
    };
    stream.on('error', lost);
    stream.on('end', lost);
  }

  private async loadCheckpoint(): Promise<void> {
    const file = join(this.dir, CHECKPOINT_FILE);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch {
      return;
    }
    try {
      const cp = JSON.parse(text) as { Data: CheckpointData; Checksum: number };
      if (fnv32a(JSON.stringify(cp.Data)) !== cp.Checksum) throw new Error('checksum mismatch');
      for (const [name, ids] of Object.entries(cp.Data.RegisteredDevices ?? {})) {
        this.resources.set(name, { devices: new Map(ids.map((id) => [id, 'Unhealthy'])), connected: false });
      }
    } catch (e) {
      this.log(`device manager checkpoint ${file} is corrupt (${(e as Error).message}); starting without it`);
    }
  }

  private async saveCheckpoint(): Promise<void> {
    const data: CheckpointData = { PodDeviceEntries: null, RegisteredDevices: Object.fromEntries([...this.resources].map(([n, r]) => [n, [...r.devices.keys()]])) };
    const file = join(this.dir, CHECKPOINT_FILE);
    await writeFile(`${file}.tmp`, JSON.stringify({ Data: data, Checksum: fnv32a(JSON.stringify(data)) }), { mode: 0o600 });
    await rename(`${file}.tmp`, file);
  }

  async stop(): Promise<void> {
    for (const r of this.resources.values()) {
      r.stream?.cancel();
      r.client?.close();
    }
    await new Promise<void>((resolve) => (this.server ? this.server.tryShutdown(() => resolve()) : resolve()));
  }
}
