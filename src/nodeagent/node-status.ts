// The Node object the agent registers and keeps current (spec 002 §2.1,
// §2.2, §8): addresses, capacity/allocatable, nodeInfo and the five
// conditions. Registration creates the Node or, when it exists, takes it
// over; `.status` is written when something changed and at least every
// `nodeStatusReportFrequency` otherwise.

import { readFile } from 'node:fs/promises';
import { arch, platform, release } from 'node:os';
import { ApiError, type ApiClient, type KubeObject } from './api-client.js';
import type { NodeCondition } from './conditions.js';
import type { HostReadings } from './host.js';
import { parseThreshold } from './host.js';
import { formatBinarySI, parseQuantity } from '../core/quantity.js';

export const AGENT_VERSION = 'v1.32.0-orch.0.1.0';

export interface NodeFacts {
  name: string;
  hostname: string;
  internalIP?: string;
  externalIP?: string;
  port: number;
  maxPods: number;
  systemReserved: Record<string, string>;
  kubeReserved?: Record<string, string>;
  /** hard eviction thresholds: memory.available and nodefs.available are held back from allocatable */
  evictionHard?: Record<string, string>;
  runtime?: { name: string; version: string };
  labels: Record<string, string>;
  taints: Record<string, unknown>[];
  /** extended resources from device plugins: name → devices (capacity) and healthy devices (allocatable) */
  extended: Record<string, { capacity: number; allocatable: number }>;
}

async function osImage(): Promise<string> {
  const t = await readFile('/etc/os-release', 'utf8').catch(() => '');
  return /^PRETTY_NAME="?([^"\n]*)"?/m.exec(t)?.[1] ?? platform();
}
const machineId = () => readFile('/etc/machine-id', 'utf8').then((s) => s.trim(), () => '');
const bootId = () => readFile('/proc/sys/kernel/random/boot_id', 'utf8').then((s) => s.trim(), () => '');

export async function nodeInfo(runtime?: { name: string; version: string }): Promise<Record<string, string>> {
  return {
    machineID: await machineId(),
    systemUUID: await machineId(),
    bootID: await bootId(),
    kernelVersion: release(),
    osImage: await osImage(),
    containerRuntimeVersion: runtime ? `${runtime.name}://${runtime.version}` : '',
    kubeletVersion: AGENT_VERSION,
    kubeProxyVersion: '',
    operatingSystem: platform(),
    architecture: arch() === 'x64' ? 'amd64' : arch(),
  };
}

/** whole KiB, in the canonical form the API server writes a Quantity back in (8 GiB is `8Gi`), as kubelet's BinarySI quantities */
const ki = (bytes: number) => formatBinarySI(Math.floor(bytes / 1024) * 1024);
/** millicores as kube's Quantity prints them: whole cores without a suffix (`2`, not `2000m`) */
const cpu = (milli: number) => (milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`);

/** a reserved amount in base units (cores for cpu); the configuration was checked at start */
const reserved = (m: Record<string, string> | undefined, res: string) => parseQuantity(m?.[res] ?? '0') ?? 0;

/**
 * kubelet's GetNodeAllocatableAbsolute: allocatable = capacity − kubeReserved − systemReserved − the hard
 * eviction threshold (memory.available for memory, nodefs.available for ephemeral-storage; a percentage
 * is of capacity), never below zero
 */
export function resources(r: HostReadings, f: NodeFacts): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const cpuMilli = Math.round(r.cpuCores * 1000);
  const capacity: Record<string, string> = {
    cpu: cpu(cpuMilli),
    memory: ki(r.memoryTotalBytes),
    'ephemeral-storage': ki(r.diskTotalBytes),
    pods: String(f.maxPods),
  };
  const held = (res: string) => reserved(f.systemReserved, res) + reserved(f.kubeReserved, res);
  const eviction = (signal: string, total: number) => {
    const t = f.evictionHard?.[signal];
    return t ? (parseThreshold(t, total) ?? 0) : 0;
  };
  const allocatable: Record<string, string> = {
    ...capacity,
    cpu: cpu(Math.max(0, cpuMilli - Math.round(held('cpu') * 1000))),
    memory: ki(Math.max(0, r.memoryTotalBytes - held('memory') - eviction('memory.available', r.memoryTotalBytes))),
    'ephemeral-storage': ki(Math.max(0, r.diskTotalBytes - held('ephemeral-storage') - eviction('nodefs.available', r.diskTotalBytes))),
  };
  for (const [name, n] of Object.entries(f.extended)) {
    capacity[name] = String(n.capacity);
    allocatable[name] = String(n.allocatable);
  }
  return { capacity, allocatable };
}

export function addresses(f: NodeFacts): { type: string; address: string }[] {
  const a: { type: string; address: string }[] = [];
  if (f.internalIP) a.push({ type: 'InternalIP', address: f.internalIP });
  if (f.externalIP) a.push({ type: 'ExternalIP', address: f.externalIP });
  a.push({ type: 'Hostname', address: f.hostname });
  return a;
}

export async function nodeStatus(f: NodeFacts, r: HostReadings, conditions: NodeCondition[]): Promise<Record<string, unknown>> {
  return {
    ...resources(r, f),
    conditions,
    addresses: addresses(f),
    daemonEndpoints: { kubeletEndpoint: { Port: f.port } },
    nodeInfo: await nodeInfo(f.runtime),
  };
}

/** the Ready condition's status in a stored Node ('' when it has none) */
export const storedReady = (n: KubeObject | undefined): string =>
  ((n?.status?.conditions ?? []) as { type: string; status: string }[]).find((x) => x.type === 'Ready')?.status ?? '';

/** the labels the agent registers its Node with */
export const nodeLabels = (f: NodeFacts): Record<string, string> => ({
  'kubernetes.io/hostname': f.hostname,
  'kubernetes.io/os': platform(),
  'kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
  ...f.labels,
});

/**
 * create the Node, or adopt an existing one with the same name; returns the stored object.
 * With `create` false (registerNode: false) the Node must exist already (an administrator made it).
 * `onPrevious` gets the Ready status the Node had before this agent's first write ('' for a new Node).
 */
export async function registerNode(api: ApiClient, f: NodeFacts, status: Record<string, unknown>, create = true, onPrevious: (ready: string) => void = () => {}): Promise<KubeObject> {
  if (!create) {
    const prev = await api.get(`/api/v1/nodes/${f.name}`);
    onPrevious(storedReady(prev));
    return api.mergePatch(`/api/v1/nodes/${f.name}/status`, { status });
  }
  const labels = nodeLabels(f);
  const body = { apiVersion: 'v1', kind: 'Node', metadata: { name: f.name, labels }, spec: f.taints.length ? { taints: f.taints } : {} };
  try {
    await api.create('/api/v1/nodes', body);
    onPrevious('');
  } catch (e) {
    if (!(e instanceof ApiError && e.code === 409)) throw e;
    // the patch answers with the Node as stored, its status still the one before this start
    onPrevious(storedReady(await api.mergePatch(`/api/v1/nodes/${f.name}`, { metadata: { labels } })));
  }
  return api.mergePatch(`/api/v1/nodes/${f.name}/status`, { status });
}

export async function patchNodeStatus(api: ApiClient, name: string, status: Record<string, unknown>): Promise<KubeObject> {
  return api.mergePatch(`/api/v1/nodes/${name}/status`, { status });
}
