// Cluster IPs, node ports and health check node ports of Services (issue #11 item 3). Each allocated
// value is a key of its own in the store (`/orch/allocations/…`, outside what
// the API serves), created in the same transaction as the Service with a
// create-if-absent compare, so two creates can never get the same value —
// on one member or through Raft. A leader-only repair pass frees values whose
// Service is gone or no longer uses them (src/controllers/service-allocation-repair.ts).

import { internalError, invalid } from '../../core/errors.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { goSlice } from '../kinds/field-errors.js';
import { initIPFamilies } from '../kinds/service-ips.js';
import { needsHealthCheck } from '../kinds/service-update.js';
import { type Ipv4Range, formatIpv4, parseIpv4, usable } from './cidr.js';

export const ALLOCATION_PREFIX = '/orch/allocations/';
export const IP_PREFIX = `${ALLOCATION_PREFIX}serviceips/`;
export const NODE_PORT_PREFIX = `${ALLOCATION_PREFIX}servicenodeports/`;

/** who holds an allocated value */
export interface AllocationOwner {
  namespace: string;
  name: string;
  uid: string;
}

export interface Reservation {
  /** keys to create with the object (each must be absent) */
  keys: { key: string; value: Uint8Array }[];
}

export interface ServiceAllocatorOptions {
  range: Ipv4Range;
  nodePorts: { min: number; max: number };
  /** the owner of an allocation key, if taken */
  ownerOf(key: string): AllocationOwner | undefined;
  random: () => number;
}

type Spec = Record<string, JSONValue> & { ports?: JSONValue[] };
type Port = Record<string, JSONValue>;

const encoder = new TextEncoder();

export const ipKey = (ip: string): string => `${IP_PREFIX}${ip}`;
export const nodePortKey = (port: number, protocol: string): string => `${NODE_PORT_PREFIX}${protocol}/${port}`;
/** the health check node port is a TCP port (kube-proxy serves HTTP on it): it shares the TCP node ports' keys */
const healthCheckKey = (port: number): string => nodePortKey(port, 'TCP');
const typeOf = (spec: Spec): string => (typeof spec.type === 'string' ? spec.type : 'ClusterIP');
const usesNodePorts = (spec: Spec): boolean => typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';

export class ServiceAllocator {
  constructor(private readonly o: ServiceAllocatorOptions) {}

  /** the first usable address: the `kubernetes` Service's */
  get firstIp(): string {
    return formatIpv4(this.o.range.base + 1);
  }

  /**
   * Fills in what the Service needs (cluster IP, node ports, health check node
   * port) and returns the keys to claim with it; throws 422 for requested
   * cluster IPs and node ports that are outside the ranges or taken, 500 when a
   * range is full or the health check node port cannot be had (as kube).
   */
  reserve(svc: ApiObject, old: ApiObject | undefined): Reservation {
    const spec = (svc.spec ??= {}) as Spec;
    const oldSpec = (old?.spec ?? {}) as Spec;
    const owner: AllocationOwner = { namespace: svc.metadata?.namespace ?? '', name: svc.metadata?.name ?? '', uid: svc.metadata?.uid ?? '' };
    const value = encoder.encode(JSON.stringify(owner));
    const keys: Reservation['keys'] = [];
    const errors: FieldError[] = [];
    const claim = (key: string): boolean => {
      // a key claimed twice in one transaction is a store error (500); validation refuses it first
      if (keys.some((k) => k.key === key)) return false;
      const holder = this.o.ownerOf(key);
      if (holder && holder.uid !== owner.uid) return false;
      if (!holder) keys.push({ key, value });
      return true;
    };
    const type = (spec.type as string | undefined) ?? 'ClusterIP';

    if (type !== 'ExternalName') {
      const requested = typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? spec.clusterIP : undefined;
      if (requested !== undefined && !(Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0)) spec.clusterIPs = [requested];
      const familyErrors = initIPFamilies(spec);
      if (familyErrors.length > 0) throw invalid('Service', '', owner.name, familyErrors);
      if (requested === 'None') {
        spec.clusterIPs = ['None'];
      } else if (requested !== undefined) {
        // kube's allocIPs error: the cluster IPs as Go's %#v, the allocator's ErrNotInRange / ErrAllocated
        const failed = `Invalid value: ${goSlice('string', [requested])}: failed to allocate IP ${requested}`;
        const n = parseIpv4(requested);
        if (n === undefined || !usable(this.o.range, n)) {
          const ip = n === undefined ? requested : formatIpv4(n);
          errors.push(fieldError('spec.clusterIPs', `${failed}: the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${this.o.range.cidr}`));
        } else if (requested !== oldSpec.clusterIP && !claim(ipKey(requested))) {
          errors.push(fieldError('spec.clusterIPs', `${failed}: provided IP is already allocated`));
        }
        spec.clusterIPs = [requested];
      } else {
        const ip = this.freeIp(claim);
        if (ip === undefined) throw internalError('failed to allocate a serviceIP: range is full');
        spec.clusterIP = ip;
        spec.clusterIPs = [ip];
      }
    }

    // kube's shouldAllocateNodePorts; allocateLoadBalancerNodePorts is defaulted (true) on every LoadBalancer write
    const needsNodePorts = type === 'NodePort' || (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
    const ports = (spec.ports ?? []) as Port[];
    const oldPorts = usesNodePorts(oldSpec) ? ((oldSpec.ports ?? []) as Port[]) : [];
    // requested node ports first, then the picked ones, as kube's initNodePorts: a pick never takes a requested port.
    // An ExternalName Service's node ports are kept as written and claim nothing (kube allocates none for it).
    if (usesNodePorts(spec)) {
      ports.forEach((p, i) => {
        const protocol = (p.protocol as string | undefined) ?? 'TCP';
        if (typeof p.nodePort !== 'number' || p.nodePort === 0) return;
        const port = p.nodePort;
        const had = oldPorts.some((q) => q.nodePort === port && ((q.protocol as string | undefined) ?? 'TCP') === protocol);
        if (!this.inNodePortRange(port)) {
          errors.push(fieldError(`spec.ports[${i}].nodePort`, `Invalid value: ${port}: ${this.notInRange()}`));
        } else if (!had && !claim(nodePortKey(port, protocol))) {
          errors.push(fieldError(`spec.ports[${i}].nodePort`, `Invalid value: ${port}: provided port is already allocated`));
        }
      });
    }
    if (needsNodePorts && errors.length === 0) {
      for (const p of ports) {
        if (typeof p.nodePort === 'number' && p.nodePort !== 0) continue;
        const port = this.freeNodePort((p.protocol as string | undefined) ?? 'TCP', claim, keys);
        if (port === undefined) throw internalError('failed to allocate a nodePort: range is full');
        p.nodePort = port;
      }
    }
    if (errors.length === 0 && needsHealthCheck(spec) && !needsHealthCheck(oldSpec)) this.reserveHealthCheck(spec, oldSpec, claim, keys);
    if (errors.length > 0) throw invalid('Service', '', owner.name, errors);
    if (type === 'LoadBalancer' || type === 'NodePort' || type === 'ClusterIP') {
      const status = (svc.status ??= {}) as Record<string, JSONValue>;
      status.loadBalancer ??= {};
    }
    return { keys };
  }

  /**
   * kube's allocHealthCheckNodePort, when a Service comes to need one (a LoadBalancer with
   * `externalTrafficPolicy: Local`, on create or by an update): the requested port is claimed, else
   * one is picked. kube answers a failure here with 500 InternalError, not 422.
   */
  private reserveHealthCheck(spec: Spec, oldSpec: Spec, claim: (key: string) => boolean, keys: Reservation['keys']): void {
    // kube's one port allocator: a port this Service holds as a node port (its key names this Service) is taken
    const own = new Set([...((spec.ports ?? []) as Port[]), ...(usesNodePorts(oldSpec) ? ((oldSpec.ports ?? []) as Port[]) : [])].map((p) => p.nodePort));
    const claimFree = (key: string): boolean => !own.has(Number(key.slice(key.lastIndexOf('/') + 1))) && claim(key);
    const requested = spec.healthCheckNodePort;
    if (typeof requested === 'number' && requested !== 0) {
      const failed = `failed to allocate requested HealthCheck NodePort ${requested}`;
      if (!this.inNodePortRange(requested)) throw internalError(`${failed}: ${this.notInRange()}`);
      if (!claimFree(healthCheckKey(requested))) throw internalError(`${failed}: provided port is already allocated`);
      return;
    }
    const port = this.freeNodePort('TCP', claimFree, keys);
    // kube prints the zero its failed pick returned
    if (port === undefined) throw internalError('failed to allocate a HealthCheck NodePort 0: range is full');
    spec.healthCheckNodePort = port;
  }

  private inNodePortRange(port: number): boolean {
    return port >= this.o.nodePorts.min && port <= this.o.nodePorts.max;
  }

  /** the port allocator's ErrNotInRange */
  private notInRange(): string {
    return `provided port is not in the valid range. The range of valid ports is ${this.o.nodePorts.min}-${this.o.nodePorts.max}`;
  }

  /** a free address: random probes first (cheap in a large range), then a scan */
  private freeIp(claim: (key: string) => boolean): string | undefined {
    const { base, size } = this.o.range;
    const usableCount = size - 2;
    for (let i = 0; i < 32; i++) {
      // the first address is the kubernetes Service's
      const n = base + 2 + Math.floor(this.o.random() * (usableCount - 1));
      if (usable(this.o.range, n) && claim(ipKey(formatIpv4(n)))) return formatIpv4(n);
    }
    const start = Math.floor(this.o.random() * usableCount);
    for (let i = 0; i < usableCount; i++) {
      const n = base + 1 + ((start + i) % usableCount);
      if (n === base + 1) continue;
      if (claim(ipKey(formatIpv4(n)))) return formatIpv4(n);
    }
    return undefined;
  }

  private freeNodePort(protocol: string, claim: (key: string) => boolean, taken: Reservation['keys']): number | undefined {
    const { min, max } = this.o.nodePorts;
    const count = max - min + 1;
    const start = Math.floor(this.o.random() * count);
    for (let i = 0; i < count; i++) {
      const port = min + ((start + i) % count);
      const key = nodePortKey(port, protocol);
      if (taken.some((k) => k.key === key)) continue;
      if (claim(key)) return port;
    }
    return undefined;
  }
}

function fieldError(field: string, message: string, type = 'FieldValueInvalid'): FieldError {
  return { field, type, message };
}

/** the values a Service holds now, as allocation keys: what its type uses (kube releases the rest) */
export function allocationKeysOf(svc: ApiObject): string[] {
  const spec = (svc.spec ?? {}) as Spec;
  const keys: string[] = [];
  if (typeOf(spec) !== 'ExternalName') {
    for (const ip of (spec.clusterIPs as string[] | undefined) ?? (typeof spec.clusterIP === 'string' ? [spec.clusterIP] : [])) {
      if (ip && ip !== 'None') keys.push(ipKey(ip));
    }
  }
  if (usesNodePorts(spec)) {
    for (const p of (spec.ports ?? []) as Port[]) {
      if (typeof p.nodePort === 'number' && p.nodePort > 0) keys.push(nodePortKey(p.nodePort, (p.protocol as string | undefined) ?? 'TCP'));
    }
  }
  if (needsHealthCheck(spec) && typeof spec.healthCheckNodePort === 'number' && spec.healthCheckNodePort > 0) keys.push(healthCheckKey(spec.healthCheckNodePort));
  return keys;
}
