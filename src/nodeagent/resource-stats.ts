// The agent's resource usage (docs/metrics.md), as kubelet 1.32 serves it:
// `/metrics/resource` (Prometheus text: node, pod and container CPU and
// working set, container start times, resource_scrape_error) and
// `/stats/summary` (a subset of the Summary API: node and pods with their
// containers' cpu and memory). Node figures come from the host (/proc/stat:
// every CPU state but idle and iowait; /proc/meminfo: working set = MemTotal −
// MemAvailable), pod and container figures from the runtime, only through its
// gRPC interface (CRI ListContainerStats). A pod's figures are the sums of its
// running containers' (kubelet reads the sandbox's cgroup; the sum is what the
// runtime can tell).

import { readFile } from 'node:fs/promises';
import { type Clock, rfc3339 as rfc3339Ms } from './clock.js';
import { LABEL_CONTAINER, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from './pod-spec.js';
import type { RuntimeClient } from './runtime/client.js';
import { type PromFamily, writePromText } from '../core/prom-text.js';

/** one reading; times in ns since the epoch */
export interface Usage {
  timeNs: number;
  /** cumulative CPU, core-nanoseconds */
  cpuCoreNs: number;
  /** the rate since the agent's previous reading of the same thing, when there was one */
  nanoCores?: number;
  workingSetBytes: number;
}
export interface ContainerUsage extends Usage {
  name: string;
  startTimeNs: number;
}
export interface PodUsage {
  name: string;
  namespace: string;
  uid: string;
  startTimeNs: number;
  containers: ContainerUsage[];
}
export interface NodeUsage extends Usage {
  nodeName: string;
  startTimeNs: number;
  availableBytes: number;
  usageBytes: number;
}
export interface ResourceSummary {
  node: NodeUsage;
  pods: PodUsage[];
}

/** Linux's USER_HZ */
const TICK_NS = 10_000_000;

/** /proc/stat and /proc/meminfo → the node's cumulative CPU, memory and boot time */
export function parseHostUsage(stat: string, meminfo: string): { cpuCoreNs: number; bootNs: number; total: number; available: number; free: number } {
  const cpu = /^cpu\s+(.*)$/m.exec(stat)?.[1]?.trim().split(/\s+/).map(Number) ?? [];
  // user nice system idle iowait irq softirq steal (guest time is already in user)
  const busy = [0, 1, 2, 5, 6, 7].reduce((s, i) => s + (cpu[i] ?? 0), 0);
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(meminfo)?.[1] ?? 0) * 1024;
  const btime = Number(/^btime\s+(\d+)/m.exec(stat)?.[1] ?? 0);
  return { cpuCoreNs: busy * TICK_NS, bootNs: btime * 1e9, total: kb('MemTotal'), available: kb('MemAvailable'), free: kb('MemFree') };
}

export interface ResourceStatsOptions {
  nodeName: string;
  runtime: RuntimeClient;
  clock: Clock;
  /** where /proc is (tests) */
  procRoot?: string;
}

export class ResourceStats {
  /** the previous reading of each container (by id) and of the node, for usageNanoCores */
  private last = new Map<string, { timeNs: number; cpuCoreNs: number }>();

  constructor(private readonly o: ResourceStatsOptions) {}

  private rate(key: string, timeNs: number, cpuCoreNs: number, seen: Set<string>): number | undefined {
    seen.add(key);
    const prev = this.last.get(key);
    this.last.set(key, { timeNs, cpuCoreNs });
    if (!prev || timeNs <= prev.timeNs || cpuCoreNs < prev.cpuCoreNs) return undefined;
    return Math.round(((cpuCoreNs - prev.cpuCoreNs) * 1e9) / (timeNs - prev.timeNs));
  }

  /** one reading of the node and of every running container of a ready sandbox; throws when the runtime fails */
  async collect(): Promise<ResourceSummary> {
    const proc = this.o.procRoot ?? '/proc';
    const [stat, meminfo] = await Promise.all([readFile(`${proc}/stat`, 'utf8'), readFile(`${proc}/meminfo`, 'utf8')]);
    const nowNs = this.o.clock.now() * 1_000_000;
    const seen = new Set<string>();
    const host = parseHostUsage(stat, meminfo);
    const node: NodeUsage = {
      nodeName: this.o.nodeName,
      startTimeNs: host.bootNs,
      timeNs: nowNs,
      cpuCoreNs: host.cpuCoreNs,
      workingSetBytes: Math.max(0, host.total - host.available),
      availableBytes: host.available,
      usageBytes: Math.max(0, host.total - host.free),
    };
    const nodeRate = this.rate('', nowNs, node.cpuCoreNs, seen);
    if (nodeRate !== undefined) node.nanoCores = nodeRate;

    const [sandboxes, containers, stats] = await Promise.all([
      this.o.runtime.listPodSandbox(),
      this.o.runtime.listContainers({ state: 'CONTAINER_RUNNING' }),
      this.o.runtime.listContainerStats(),
    ]);
    const byId = new Map(stats.filter((s) => s.attributes).map((s) => [s.attributes!.id, s]));
    const pods: PodUsage[] = [];
    for (const sb of sandboxes) {
      if (sb.state !== 'SANDBOX_READY') continue;
      const pod: PodUsage = {
        name: sb.labels[LABEL_POD_NAME] ?? sb.metadata.name,
        namespace: sb.labels[LABEL_POD_NAMESPACE] ?? sb.metadata.namespace,
        uid: sb.labels[LABEL_POD_UID] ?? sb.metadata.uid,
        startTimeNs: sb.createdAt,
        containers: [],
      };
      for (const c of containers) {
        const s = byId.get(c.id);
        if (c.podSandboxId !== sb.id || !s?.cpu?.usageCoreNanoSeconds) continue;
        const u: ContainerUsage = {
          name: c.labels[LABEL_CONTAINER] ?? c.metadata.name,
          // kubelet's CRI stats provider: a container's start time is its creation
          startTimeNs: c.createdAt,
          timeNs: s.cpu.timestamp || nowNs,
          cpuCoreNs: s.cpu.usageCoreNanoSeconds.value,
          workingSetBytes: s.memory?.workingSetBytes?.value ?? 0,
        };
        const r = this.rate(c.id, u.timeNs, u.cpuCoreNs, seen);
        if (r !== undefined) u.nanoCores = r;
        pod.containers.push(u);
      }
      pod.containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      pods.push(pod);
    }
    for (const k of [...this.last.keys()]) if (!seen.has(k)) this.last.delete(k);
    return { node, pods };
  }
}

const HELP = (s: string) => `[STABLE] ${s}`;
const ms = (ns: number) => Math.floor(ns / 1e6);

/** kubelet 1.32's /metrics/resource families; `summary` undefined = the reading failed (resource_scrape_error 1) */
export function resourceMetricsText(summary: ResourceSummary | undefined): string {
  const fam = (name: string, type: 'counter' | 'gauge', help: string): PromFamily => ({ name, type, help: HELP(help), samples: [] });
  const containerCpu = fam('container_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the container in core-seconds');
  const containerMem = fam('container_memory_working_set_bytes', 'gauge', 'Current working set of the container in bytes');
  const containerStart = fam('container_start_time_seconds', 'gauge', 'Start time of the container since unix epoch in seconds');
  const nodeCpu = fam('node_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the node in core-seconds');
  const nodeMem = fam('node_memory_working_set_bytes', 'gauge', 'Current working set of the node in bytes');
  const podCpu = fam('pod_cpu_usage_seconds_total', 'counter', 'Cumulative cpu time consumed by the pod in core-seconds');
  const podMem = fam('pod_memory_working_set_bytes', 'gauge', 'Current working set of the pod in bytes');
  // kubelet 1.32 also declares `scrape_error`, deprecated in 1.29 (ALPHA) and so hidden: not written
  const scrapeError = fam('resource_scrape_error', 'gauge', '1 if there was an error while getting container metrics, 0 otherwise');
  scrapeError.samples.push({ labels: {}, value: summary ? 0 : 1 });
  if (summary) {
    const n = summary.node;
    nodeCpu.samples.push({ labels: {}, value: n.cpuCoreNs / 1e9, timestampMs: ms(n.timeNs) });
    nodeMem.samples.push({ labels: {}, value: n.workingSetBytes, timestampMs: ms(n.timeNs) });
    for (const p of summary.pods) {
      const podLabels = { namespace: p.namespace, pod: p.name };
      for (const c of p.containers) {
        const labels = { container: c.name, ...podLabels };
        containerCpu.samples.push({ labels, value: c.cpuCoreNs / 1e9, timestampMs: ms(c.timeNs) });
        containerMem.samples.push({ labels, value: c.workingSetBytes, timestampMs: ms(c.timeNs) });
        containerStart.samples.push({ labels, value: c.startTimeNs / 1e9, timestampMs: ms(c.startTimeNs) });
      }
      if (p.containers.length === 0) continue;
      const t = Math.max(...p.containers.map((c) => c.timeNs));
      podCpu.samples.push({ labels: podLabels, value: p.containers.reduce((s, c) => s + c.cpuCoreNs, 0) / 1e9, timestampMs: ms(t) });
      podMem.samples.push({ labels: podLabels, value: p.containers.reduce((s, c) => s + c.workingSetBytes, 0), timestampMs: ms(t) });
    }
  }
  return writePromText([containerCpu, containerMem, containerStart, nodeCpu, nodeMem, podCpu, podMem, scrapeError]);
}

/** metav1.Time of ns since the epoch */
const rfc3339 = (ns: number) => rfc3339Ms(Math.floor(ns / 1e6));

function cpuJson(u: { timeNs: number; cpuCoreNs: number; nanoCores?: number }): Record<string, unknown> {
  return { time: rfc3339(u.timeNs), ...(u.nanoCores !== undefined ? { usageNanoCores: u.nanoCores } : {}), usageCoreNanoSeconds: u.cpuCoreNs };
}

/** the Summary API (stats/v1alpha1) subset: node cpu/memory, pods with their containers' cpu/memory */
export function summaryJson(s: ResourceSummary): Record<string, unknown> {
  const n = s.node;
  return {
    node: {
      nodeName: n.nodeName,
      startTime: rfc3339(n.startTimeNs),
      cpu: cpuJson(n),
      memory: { time: rfc3339(n.timeNs), availableBytes: n.availableBytes, usageBytes: n.usageBytes, workingSetBytes: n.workingSetBytes },
    },
    pods: s.pods.map((p) => {
      const t = p.containers.length ? Math.max(...p.containers.map((c) => c.timeNs)) : n.timeNs;
      const rates = p.containers.map((c) => c.nanoCores);
      const podCpu = {
        timeNs: t,
        cpuCoreNs: p.containers.reduce((a, c) => a + c.cpuCoreNs, 0),
        ...(rates.every((r) => r !== undefined) && rates.length > 0 ? { nanoCores: rates.reduce((a, r) => a + r!, 0) } : {}),
      };
      return {
        podRef: { name: p.name, namespace: p.namespace, uid: p.uid },
        startTime: rfc3339(p.startTimeNs),
        containers: p.containers.map((c) => ({
          name: c.name,
          startTime: rfc3339(c.startTimeNs),
          cpu: cpuJson(c),
          memory: { time: rfc3339(c.timeNs), workingSetBytes: c.workingSetBytes },
        })),
        cpu: cpuJson(podCpu),
        memory: { time: rfc3339(t), workingSetBytes: p.containers.reduce((a, c) => a + c.workingSetBytes, 0) },
      };
    }),
  };
}
