// The EndpointSlice mirroring controller (kube-controller-manager's
// `endpointslicemirroring`, pkg/controller/endpointslicemirroring, kube 1.32),
// leader only: the Endpoints of a Service without a selector (Endpoints a user
// or another controller writes) are mirrored into EndpointSlices, so clients
// that read slices see them. Nothing is mirrored for a Service with a selector
// (the EndpointSlice controller's), for Endpoints labelled
// `endpointslice.kubernetes.io/skip-mirror: "true"` or used as a
// leader-election lock; the mirrored slices of such Endpoints, or of Endpoints
// or a Service gone, are deleted. It acts only on slices labelled managed-by
// endpointslicemirroring-controller.k8s.io. docs/controllers.md "Endpoints and
// EndpointSlices".

import { type Clock, systemClock } from '../../core/clock.js';
import { StatusError, notFound } from '../../core/errors.js';
import { deepEqual, newControllerRef } from '../../machinery/meta.js';
import type { GenericStore } from '../../registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../registry/types.js';
import { ControllerLoop, type Informer, type InformerHandlers, type InformerSource, LoopController } from '../runtime/index.js';
import { CONTROLLER_MANAGER } from '../workloads/writes.js';
import { type ResolvedPort, familyOf, isEndpointIP, serviceSelector } from './pod-endpoints.js';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL, groupKey } from './slice-plan.js';

export const ENDPOINTSLICE_MIRRORING_CONTROLLER = 'endpointslicemirroring';
export const MIRRORING_CONTROLLER_NAME = 'endpointslicemirroring-controller.k8s.io';
/** kube's discovery.LabelSkipMirror */
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';
/** resourcelock.LeaderElectionRecordAnnotationKey: such Endpoints are a lock, not endpoints */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** annotations kube does not copy onto the slices */
const NOT_COPIED = new Set(['endpoints.kubernetes.io/last-change-trigger-time', 'kubectl.kubernetes.io/last-applied-configuration']);
/** --mirroring-max-endpoints-per-subset (default 1000): addresses past it are not mirrored; also a slice's size */
export const MAX_ENDPOINTS_PER_SUBSET = 1000;
const BY_ENDPOINTS = 'endpoints';

export interface EndpointSliceMirroringOptions {
  store: InformerSource;
  services: () => GenericStore;
  endpoints: () => GenericStore;
  slices: () => GenericStore;
  /** `discovery.<api-domain>/v1` */
  sliceApiVersion: string;
  clock?: Clock;
  log?: (msg: string) => void;
}

type Address = { ip?: string; hostname?: string; nodeName?: string; targetRef?: Record<string, JSONValue> };
type Subset = { addresses?: Address[]; notReadyAddresses?: Address[]; ports?: { name?: string; port?: number; protocol?: string; appProtocol?: string }[] };
type MirroredEndpoint = { addresses: string[]; conditions: { ready: boolean }; hostname?: string; nodeName?: string; targetRef?: Record<string, JSONValue> };
interface Group {
  family: string;
  ports: ResolvedPort[];
  endpoints: MirroredEndpoint[];
}

/** the Endpoints a slice this controller manages mirrors, as `namespace/name` */
function mirroredKey(s: ApiObject): string | undefined {
  const labels = (s.metadata?.labels ?? {}) as Record<string, string>;
  const name = labels[SERVICE_NAME_LABEL];
  return name && labels[MANAGED_BY_LABEL] === MIRRORING_CONTROLLER_NAME ? `${s.metadata?.namespace ?? ''}/${name}` : undefined;
}

/** kube's shouldMirror */
function shouldMirror(ep: ApiObject): boolean {
  if ((ep.metadata?.annotations as Record<string, string> | undefined)?.[LEADER_ANNOTATION] !== undefined) return false;
  return (ep.metadata?.labels as Record<string, string> | undefined)?.[SKIP_MIRROR_LABEL] !== 'true';
}

/** kube's addressToEndpoint: the address, ready or not, its hostname, node and target */
function addressToEndpoint(a: Address, ready: boolean): MirroredEndpoint {
  return {
    addresses: [a.ip ?? ''],
    conditions: { ready },
    ...(a.hostname ? { hostname: a.hostname } : {}),
    ...(a.nodeName ? { nodeName: a.nodeName } : {}),
    ...(a.targetRef ? { targetRef: a.targetRef } : {}),
  };
}

/** the Endpoints' subsets as slices' contents: by address type and port set, at most MAX_ENDPOINTS_PER_SUBSET addresses of a subset */
export function mirroredGroups(ep: ApiObject): Map<string, Group> {
  const out = new Map<string, Group>();
  for (const subset of ((ep as { subsets?: Subset[] }).subsets ?? [])) {
    const ports: ResolvedPort[] = (subset.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port ?? 0, protocol: p.protocol ?? 'TCP', ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}) }));
    const addresses = [...(subset.addresses ?? []).map((a) => [a, true] as const), ...(subset.notReadyAddresses ?? []).map((a) => [a, false] as const)].slice(0, MAX_ENDPOINTS_PER_SUBSET);
    for (const [a, ready] of addresses) {
      // kube skips an address that is no IP (getAddressType); a special one would make the slice invalid
      if (!a.ip || !isEndpointIP(a.ip)) continue;
      const family = familyOf(a.ip);
      const k = groupKey(family, ports);
      let g = out.get(k);
      if (!g) out.set(k, (g = { family, ports, endpoints: [] }));
      if (!g.endpoints.some((e) => e.addresses[0] === a.ip && e.conditions.ready === ready)) g.endpoints.push(addressToEndpoint(a, ready));
    }
  }
  return out;
}

/** kube's newEndpointSlice (mirroring): the Endpoints' labels and annotations, service name, managed-by, owned by the Endpoints */
function sliceMeta(ep: ApiObject): { labels: Record<string, string>; annotations: Record<string, string>; ownerReferences: Record<string, JSONValue>[] } {
  const m = ep.metadata ?? {};
  const labels = { ...((m.labels ?? {}) as Record<string, string>), [SERVICE_NAME_LABEL]: m.name ?? '', [MANAGED_BY_LABEL]: MIRRORING_CONTROLLER_NAME };
  const annotations = Object.fromEntries(Object.entries((m.annotations ?? {}) as Record<string, string>).filter(([k]) => !NOT_COPIED.has(k)));
  const ownerReferences = [newControllerRef({ apiVersion: 'v1', kind: 'Endpoints', name: m.name ?? '', uid: m.uid ?? '' }) as unknown as Record<string, JSONValue>];
  return { labels, annotations, ownerReferences };
}

export class EndpointSliceMirroringController extends LoopController {
  protected readonly loop: ControllerLoop;
  private services: Informer | undefined;
  private endpoints: Informer | undefined;
  private slices: Informer | undefined;

  constructor(private readonly o: EndpointSliceMirroringOptions) {
    super();
    this.loop = new ControllerLoop(o.store, { name: ENDPOINTSLICE_MIRRORING_CONTROLLER, clock: o.clock ?? systemClock, log: o.log, baseDelayMs: 200 });
  }

  start(): void {
    this.stop();
    this.loop.begin((key) => this.sync(key));
    const byKey: InformerHandlers = {
      add: (_o, key) => this.loop.enqueue(key),
      update: (_old, _o, key) => this.loop.enqueue(key),
      delete: (_o, key) => this.loop.enqueue(key),
    };
    this.services = this.loop.inform(this.o.services().rangeKeys(''), byKey);
    this.endpoints = this.loop.inform(this.o.endpoints().rangeKeys(''), byKey);
    // a mirrored slice changed or deleted by someone else is put back (a sync that changes nothing writes nothing)
    const slice = (s: ApiObject, old?: ApiObject): void => {
      const k = mirroredKey(s) ?? (old && mirroredKey(old));
      if (k) this.loop.enqueue(k);
    };
    this.slices = this.loop.inform(this.o.slices().rangeKeys(''), { add: (s) => slice(s), update: (old, s) => slice(s, old), delete: (s) => slice(s) }, {
      [BY_ENDPOINTS]: (s) => {
        const k = mirroredKey(s);
        return k ? [k] : [];
      },
    });
  }

  stop(): void {
    this.loop.end();
    this.services = this.endpoints = this.slices = undefined;
  }

  private async sync(key: string): Promise<void> {
    const ns = key.slice(0, key.indexOf('/'));
    const svc = this.services?.get(key);
    const ep = this.endpoints?.get(key);
    const existing = [...(this.slices?.byIndex(BY_ENDPOINTS, key) ?? [])];
    const store = this.o.slices();
    const opts = { dryRun: false, manager: CONTROLLER_MANAGER };
    // a Service with a selector has the EndpointSlice controller's slices; no Service or Endpoints, nothing to mirror
    const groups = svc && !serviceSelector(svc) && ep && !ep.metadata?.deletionTimestamp && shouldMirror(ep) ? mirroredGroups(ep) : new Map<string, Group>();
    const meta = ep ? sliceMeta(ep) : undefined;
    for (const g of groups.values()) {
      for (let i = 0; i < g.endpoints.length; i += MAX_ENDPOINTS_PER_SUBSET) {
        const endpoints = g.endpoints.slice(i, i + MAX_ENDPOINTS_PER_SUBSET);
        const k = groupKey(g.family, g.ports);
        const reuse = existing.findIndex((s) => groupKey(String((s as { addressType?: string }).addressType), ((s as { ports?: ResolvedPort[] }).ports ?? []).map((p) => ({ ...p, name: p.name ?? '' }))) === k);
        const want = { ...meta!, endpoints, ports: g.ports };
        if (reuse < 0) {
          await this.create(ns, { apiVersion: this.o.sliceApiVersion, kind: 'EndpointSlice', metadata: { generateName: `${ep!.metadata?.name ?? ''}-`, namespace: ns, labels: want.labels, annotations: want.annotations, ownerReferences: want.ownerReferences }, addressType: g.family, endpoints, ports: g.ports } as unknown as ApiObject, opts);
          continue;
        }
        const [cur] = existing.splice(reuse, 1) as [ApiObject];
        const m = cur.metadata ?? {};
        const same = deepEqual(m.labels ?? {}, want.labels) && deepEqual(m.annotations ?? {}, want.annotations) && deepEqual(m.ownerReferences ?? [], want.ownerReferences)
          && deepEqual((cur as { endpoints?: unknown }).endpoints ?? [], endpoints) && deepEqual((cur as { ports?: unknown }).ports ?? [], g.ports);
        if (same) continue;
        await store.guaranteedUpdate(ns, m.name ?? '', opts, (live) => {
          if (!live || live.metadata?.uid !== m.uid) throw notFound('endpointslices', 'discovery', m.name ?? '');
          return { ...live, metadata: { ...live.metadata, labels: want.labels, annotations: want.annotations, ownerReferences: want.ownerReferences }, endpoints, ports: g.ports } as unknown as ApiObject;
        });
      }
    }
    for (const s of existing) {
      try {
        await store.delete(ns, s.metadata?.name ?? '', { dryRun: false, preconditions: { uid: s.metadata?.uid ?? '' } });
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
    }
  }

  private async create(ns: string, slice: ApiObject, opts: { dryRun: boolean; manager: string }): Promise<void> {
    try {
      await this.o.slices().create(ns, slice, opts);
    } catch (e) {
      // a namespace being deleted refuses creates: its Endpoints go too
      if (e instanceof StatusError && e.code === 403 && /being terminated/.test(e.message)) return;
      throw e;
    }
  }
}
