// core/v1 Service: a named abstraction of a set of pods behind ports.
// IP and port allocation is not done here (src/registry/allocators/); the
// strategy defaults as kube's SetDefaults_Service, carries allocated values
// over on update and validates (service-validation.ts, service-update.ts).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, JSONValue, ResourceDefinition } from '../types.js';
import { column, fieldOf, get, getArray, getObject, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, listMap, obj, proto, ref, str, strMap, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { deepEqual } from '../../machinery/meta.js';
import { keepHealthCheckNodePort, needsHealthCheck, normalizeClusterIPs, serviceUpdateErrors } from './service-update.js';
import { externallyAccessible, serviceType, validateService } from './service-validation.js';
import { each } from '../zero-shape.js';

export function serviceDefinition(n: SchemaNames): ResourceDefinition {
  const servicePort = obj('A port the service exposes.', proto({ name: 1, protocol: 2, appProtocol: 6, port: 3, targetPort: 4, nodePort: 5 }, {
    name: str('Name of the port, a DNS label; required when there are several ports.'),
    protocol: enumOf('IP protocol of the port.', ['SCTP', 'TCP', 'UDP'], { default: 'TCP' }),
    appProtocol: str('Application protocol of the port.'),
    port: int32('Port the service exposes.'),
    targetPort: ref(n.intOrString, 'Port number or name on the pods; defaults to port.'),
    nodePort: int32('Port on every node for NodePort and LoadBalancer services.', { 'x-orch-proto-omit-zero': true }),
  }), ['port']);
  return {
    group: '',
    version: 'v1',
    kind: 'Service',
    resource: 'services',
    returnDeletedObject: true,
    singular: 'service',
    scope: 'Namespaced',
    shortNames: ['svc'],
    categories: ['all'],
    subresources: ['status', 'proxy'],
    nameValidation: 'DNS1035Label',
    schema: kindSchema(n, 'Service is a named abstraction of a software service: a port proxies to pods chosen by a selector.', proto({ spec: 2, status: 3 }, {
      spec: obj('Desired behaviour of the service.', proto({
        ports: 1, selector: 2, clusterIP: 3, type: 4, externalIPs: 5, sessionAffinity: 7, loadBalancerIP: 8, loadBalancerSourceRanges: 9,
        externalName: 10, externalTrafficPolicy: 11, healthCheckNodePort: 12, publishNotReadyAddresses: 13, sessionAffinityConfig: 14,
        ipFamilyPolicy: 17, clusterIPs: 18, ipFamilies: 19, allocateLoadBalancerNodePorts: 20, loadBalancerClass: 21, internalTrafficPolicy: 22,
        trafficDistribution: 23,
      }, {
        ports: listMap('Ports the service exposes.', servicePort, ['port', 'protocol'], 'port'),
        selector: strMap('Labels of the pods traffic is routed to; empty means endpoints are managed externally.', { 'x-orch-map-type': 'atomic' }),
        clusterIP: str('Virtual IP of the service; "None" for a headless service. Usually assigned by the server.'),
        clusterIPs: atomicList('Virtual IPs of the service, at most one per IP family.', { type: 'string' }),
        type: enumOf('How the service is exposed.', ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'], { default: 'ClusterIP' }),
        externalIPs: atomicList('External IPs for which nodes accept traffic for this service.', { type: 'string' }),
        sessionAffinity: enumOf('Session affinity.', ['ClientIP', 'None'], { default: 'None' }),
        loadBalancerIP: str('Deprecated: requested load balancer IP.'),
        loadBalancerSourceRanges: atomicList('Client IP ranges allowed through the load balancer.', { type: 'string' }),
        externalName: str('DNS name returned as a CNAME for ExternalName services.'),
        externalTrafficPolicy: enumOf('Routing of external traffic.', ['Cluster', 'Local']),
        healthCheckNodePort: int32('Health check node port for Local external traffic policy.', { 'x-orch-proto-omit-zero': true }),
        publishNotReadyAddresses: bool('Publish addresses of pods that are not ready.', { 'x-orch-proto-omit-zero': true }),
        sessionAffinityConfig: obj('Session affinity settings.', proto({ clientIP: 1 }, {
          clientIP: obj('ClientIP affinity settings.', proto({ timeoutSeconds: 1 }, { timeoutSeconds: int32('Sticky session time, 1 to 86400 seconds.') })),
        })),
        ipFamilies: atomicList('IP families (IPv4, IPv6) assigned to the service.', { type: 'string' }),
        ipFamilyPolicy: enumOf('Dual-stack policy.', ['PreferDualStack', 'RequireDualStack', 'SingleStack']),
        allocateLoadBalancerNodePorts: bool('Allocate node ports for LoadBalancer services.'),
        loadBalancerClass: str('Class of the load balancer implementation.'),
        internalTrafficPolicy: enumOf('Routing of cluster-internal traffic.', ['Cluster', 'Local']),
        trafficDistribution: str('Preference for distributing traffic to endpoints.'),
      })),
      status: obj('Most recently observed status of the service.', proto({ loadBalancer: 1, conditions: 2 }, {
        loadBalancer: obj('Current state of the load balancer.', proto({ ingress: 1 }, {
          ingress: atomicList('Ingress points of the load balancer.', obj('One ingress point.', proto({ ip: 1, hostname: 2, ipMode: 3, ports: 4 }, {
            ip: str('IP address.'),
            hostname: str('Host name.'),
            ipMode: str('How the IP is handled.'),
            ports: atomicList('Port status.', obj('One port status.', proto({ port: 1, protocol: 2, error: 3 }, { port: int32('Port.'), protocol: str('Protocol.'), error: str('Error.') }), ['port', 'protocol'])),
          }))),
        })),
        conditions: listMap('Current service state.', obj('A condition.', proto({ type: 1, status: 2, observedGeneration: 3, lastTransitionTime: 4, reason: 5, message: 6 }, {
          type: str('Condition type.'),
          status: str('True, False or Unknown.'),
          observedGeneration: { type: 'integer', format: 'int64', description: 'Generation the condition was set for.' },
          lastTransitionTime: { ...time('Last change.'), 'x-orch-zero-null': true },
          reason: str('Machine-readable reason.'),
          message: str('Human-readable details.'),
          // kube's ValidateServiceStatusUpdate checks only the load balancer: a condition set without a
          // transition time (Go's zero time, sent as null; the Services status-lifecycle e2e does so),
          // a reason or a message is kept, and written back as Go does (zero shape below)
        }), ['type', 'status']), ['type'], 'type'),
      })),
    })),
    strategy: {
      // metav1.Condition: reason and message without omitempty, a zero lastTransitionTime is null
      zeroShape: { spec: {}, status: { loadBalancer: {}, conditions: each({ lastTransitionTime: null, reason: '', message: '' }) } },
      selectableFields: { 'spec.clusterIP': fieldOf('spec', 'clusterIP'), 'spec.type': fieldOf('spec', 'type') },
      default: defaultService,
      prepareForUpdate: keepAllocatedValues,
      validate: validateService,
      // kube's ValidateServiceUpdate: the update rules first, then the create ones
      validateUpdate: (o, old) => [...serviceUpdateErrors(o, old), ...validateService(o)],
      columns: [
        column('Type', 'string', (o) => getString(o, 'spec', 'type') ?? 'ClusterIP', { description: 'The type of the service' }),
        column('Cluster-IP', 'string', (o) => getString(o, 'spec', 'clusterIP') || '<none>', { description: 'The cluster IP of the service' }),
        column('External-IP', 'string', externalIP, { description: 'The external IPs of the service' }),
        column('Port(s)', 'string', portsCell, { description: 'The ports exposed by the service' }),
        column('Selector', 'string', selectorCell, { priority: 1, description: 'The label selector of the service' }),
      ],
    },
  };
}

type Obj = Record<string, JSONValue>;

const needsClusterIP = (spec: Obj): boolean => spec.type !== 'ExternalName';
const needsNodePorts = (spec: Obj): boolean => spec.type === 'NodePort' || spec.type === 'LoadBalancer';
const same = (a: JSONValue | undefined, b: JSONValue | undefined): boolean => deepEqual(a ?? null, b ?? null);
const nonEmpty = (v: JSONValue | undefined): JSONValue | undefined => (Array.isArray(v) && v.length > 0 ? v : undefined);

/**
 * An update that leaves out what the server allocated keeps it (kube's
 * patchAllocatedValues), `clusterIP` and `clusterIPs` are lined up
 * (normalizeClusterIPs), and one that changes the type drops what the new type
 * does not use (dropTypeDependentFields): cluster IPs and IP families for
 * ExternalName, node ports for ClusterIP and ExternalName.
 */
function keepAllocatedValues(o: ApiObject, old: ApiObject): void {
  const spec = getObject(o, 'spec');
  const oldSpec = getObject(old, 'spec');
  if (!spec || !oldSpec) return;
  if (needsClusterIP(spec) && needsClusterIP(oldSpec)) {
    if ((spec.clusterIP === undefined || spec.clusterIP === '') && oldSpec.clusterIP !== undefined) spec.clusterIP = oldSpec.clusterIP;
    if (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0) {
      if (oldSpec.clusterIPs !== undefined) spec.clusterIPs = oldSpec.clusterIPs;
    }
    if (spec.ipFamilies === undefined && oldSpec.ipFamilies !== undefined) spec.ipFamilies = oldSpec.ipFamilies;
    if (spec.ipFamilyPolicy === undefined && oldSpec.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
  }
  normalizeClusterIPs(spec, oldSpec);
  keepHealthCheckNodePort(spec, oldSpec);
  const ports = getArray(spec, 'ports') as Obj[];
  const oldPorts = getArray(oldSpec, 'ports') as Obj[];
  if (needsNodePorts(spec) && needsNodePorts(oldSpec)) {
    for (const p of ports) {
      if (p.nodePort !== undefined && p.nodePort !== 0) continue;
      const match = oldPorts.find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP')) ?? (ports.length === 1 && oldPorts.length === 1 ? oldPorts[0] : undefined);
      if (match?.nodePort !== undefined) p.nodePort = match.nodePort;
    }
  }
  dropTypeDependentFields(o, old, ports, oldPorts);
}

/** kube's dropTypeDependentFields: what the new type does not use goes, unless the update changed it */
function dropTypeDependentFields(o: ApiObject, old: ApiObject, ports: Obj[], oldPorts: Obj[]): void {
  const spec = getObject(o, 'spec')!;
  const oldSpec = getObject(old, 'spec')!;
  const type = serviceType(spec);
  const oldType = serviceType(oldSpec);
  // cluster IPs and IP families go to ExternalName when the update left them as they were (validation refuses changed ones)
  if (needsClusterIP(oldSpec) && !needsClusterIP(spec)) {
    if (same(spec.clusterIP || undefined, oldSpec.clusterIP || undefined) && same(nonEmpty(spec.clusterIPs), nonEmpty(oldSpec.clusterIPs))) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, oldSpec.ipFamilies)) delete spec.ipFamilies;
    if (same(spec.ipFamilyPolicy, oldSpec.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
  }
  // node ports go when the update adds none of its own
  const had = new Set(oldPorts.map((p) => p.nodePort).filter((n) => typeof n === 'number' && n !== 0));
  if (needsNodePorts(oldSpec) && !needsNodePorts(spec) && ports.every((p) => !p.nodePort || had.has(p.nodePort))) {
    for (const p of ports) delete p.nodePort;
  }
  if (needsHealthCheck(oldSpec) && !needsHealthCheck(spec) && (spec.healthCheckNodePort ?? 0) === (oldSpec.healthCheckNodePort ?? 0)) delete spec.healthCheckNodePort;
  if (oldType === 'LoadBalancer' && type !== 'LoadBalancer') {
    if (typeof spec.allocateLoadBalancerNodePorts === 'boolean' && spec.allocateLoadBalancerNodePorts === oldSpec.allocateLoadBalancerNodePorts) delete spec.allocateLoadBalancerNodePorts;
    if ((spec.loadBalancerClass ?? null) === (oldSpec.loadBalancerClass ?? null)) delete spec.loadBalancerClass;
  }
  if (externallyAccessible(oldSpec, oldType) && !externallyAccessible(spec, type) && (spec.externalTrafficPolicy ?? '') === (oldSpec.externalTrafficPolicy ?? '')) {
    delete spec.externalTrafficPolicy;
  }
  // the load balancer's status goes with the type
  const status = getObject(o, 'status');
  if (type !== 'LoadBalancer' && status?.loadBalancer !== undefined) status.loadBalancer = {};
}

function defaultService(o: ApiObject): void {
  const spec = getObject(o, 'spec');
  if (!spec) return;
  for (const p of getArray(spec, 'ports')) {
    // kube's SetDefaults_Service: a zero targetPort (absent, 0 or "") is the port
    if (p && typeof p === 'object' && !Array.isArray(p) && typeof p.port === 'number' && (p.targetPort === undefined || p.targetPort === null || p.targetPort === 0 || p.targetPort === '')) p.targetPort = p.port;
  }
  const type = serviceType(spec);
  // kube defaults it for every other type, and hides it on an ExternalName Service when it reads one (defaultOnRead)
  if (type === 'ExternalName') delete spec.internalTrafficPolicy;
  else spec.internalTrafficPolicy ??= 'Cluster';
  if (externallyAccessible(spec, type) && spec.externalTrafficPolicy === undefined) spec.externalTrafficPolicy = 'Cluster';
  if (type === 'LoadBalancer' && (spec.allocateLoadBalancerNodePorts === undefined || spec.allocateLoadBalancerNodePorts === null)) spec.allocateLoadBalancerNodePorts = true;
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig === undefined) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
}

function externalIP(o: ApiObject): string {
  const type = getString(o, 'spec', 'type') ?? 'ClusterIP';
  const ext = getArray(o, 'spec', 'externalIPs').map(String);
  switch (type) {
    case 'ExternalName':
      return getString(o, 'spec', 'externalName') ?? '<none>';
    case 'LoadBalancer': {
      const lb = getArray(o, 'status', 'loadBalancer', 'ingress').map((i) => getString(i, 'ip') ?? getString(i, 'hostname') ?? '').filter(Boolean);
      const all = [...lb, ...ext];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    default:
      return ext.length > 0 ? ext.join(',') : '<none>';
  }
}

function portsCell(o: ApiObject): string {
  const ports = getArray(o, 'spec', 'ports');
  if (ports.length === 0) return '<none>';
  return ports
    .map((p) => {
      const port = get(p, 'port');
      const proto = getString(p, 'protocol') ?? 'TCP';
      const node = get(p, 'nodePort');
      return typeof node === 'number' && node > 0 ? `${String(port)}:${node}/${proto}` : `${String(port)}/${proto}`;
    })
    .join(',');
}

function selectorCell(o: ApiObject): string {
  const sel = getObject(o, 'spec', 'selector');
  if (!sel || Object.keys(sel).length === 0) return '<none>';
  return Object.keys(sel)
    .sort()
    .map((k) => `${k}=${String(sel[k])}`)
    .join(',');
}
