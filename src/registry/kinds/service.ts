// core/v1 Service: a named abstraction of a set of pods behind ports.
// IP allocation is not done here; the strategy defaults targetPort to port
// and checks port/name rules.

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { ApiObject, FieldError, JSONValue, ResourceDefinition } from '../types.js';
import { column, fieldOf, get, getArray, getObject, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, listMap, obj, proto, ref, str, strMap, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';
import { duplicate, forbidden, invalid } from './field-errors.js';
import { clusterIPsErrors } from './service-ips.js';
import { keepHealthCheckNodePort, loadBalancerClassErrors, normalizeClusterIPs, serviceUpdateErrors } from './service-update.js';
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

/**
 * An update that leaves out what the server allocated keeps it (kube's
 * patchAllocatedValues), and one that changes the type drops what the new
 * type does not use (dropTypeDependentFields): a cluster IP for ExternalName,
 * node ports for ClusterIP. `clusterIP` and `clusterIPs` are then lined up (normalizeClusterIPs).
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
    normalizeClusterIPs(spec, oldSpec);
    if (spec.ipFamilies === undefined && oldSpec.ipFamilies !== undefined) spec.ipFamilies = oldSpec.ipFamilies;
    if (spec.ipFamilyPolicy === undefined && oldSpec.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = oldSpec.ipFamilyPolicy;
  } else if (!needsClusterIP(spec)) {
    for (const f of ['clusterIP', 'clusterIPs', 'ipFamilies', 'ipFamilyPolicy']) delete spec[f];
  }
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
  const type = typeof spec.type === 'string' ? spec.type : 'ClusterIP';
  const oldType = typeof oldSpec.type === 'string' ? oldSpec.type : 'ClusterIP';
  // node ports go when the update adds none of its own
  const had = new Set(oldPorts.map((p) => p.nodePort).filter((n) => typeof n === 'number' && n !== 0));
  if (needsNodePorts(oldSpec) && !needsNodePorts(spec) && ports.every((p) => !p.nodePort || had.has(p.nodePort))) {
    for (const p of ports) delete p.nodePort;
  }
  const needsHC = (t: string, s: Obj) => t === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';
  if (needsHC(oldType, oldSpec) && !needsHC(type, spec) && (spec.healthCheckNodePort ?? 0) === (oldSpec.healthCheckNodePort ?? 0)) delete spec.healthCheckNodePort;
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
  if (spec.type !== 'ExternalName' && spec.internalTrafficPolicy === undefined) spec.internalTrafficPolicy = 'Cluster';
  if (externallyAccessible(spec, typeof spec.type === 'string' ? spec.type : 'ClusterIP') && spec.externalTrafficPolicy === undefined) spec.externalTrafficPolicy = 'Cluster';
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig === undefined) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
}

function validateService(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const spec = getObject(o, 'spec') ?? {};
  const type = typeof spec.type === 'string' ? spec.type : 'ClusterIP';
  const ports = getArray(spec, 'ports') as Obj[];
  if (type === 'ExternalName') {
    if (!spec.externalName) errs.push({ field: 'spec.externalName', type: 'FieldValueRequired', message: 'Required value' });
  } else if (ports.length === 0 && spec.clusterIP !== 'None') {
    errs.push({ field: 'spec.ports', type: 'FieldValueRequired', message: 'Required value' });
  }
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const name = typeof p?.name === 'string' ? p.name : '';
    if (ports.length > 1 && !name) errs.push({ field: `spec.ports[${i}].name`, type: 'FieldValueRequired', message: 'Required value' });
    if (name) {
      for (const m of isDNS1123Label(name)) errs.push(invalid(`spec.ports[${i}].name`, name, m));
      if (names.has(name)) errs.push({ field: `spec.ports[${i}].name`, type: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(name)}` });
      names.add(name);
    }
    for (const f of ['port', 'nodePort'] as const) {
      const v = p?.[f];
      if (typeof v === 'number' && (v < 1 || v > 65535) && !(f === 'nodePort' && v === 0)) {
        errs.push({ field: `spec.ports[${i}].${f}`, type: 'FieldValueInvalid', message: `Invalid value: ${v}: must be between 1 and 65535, inclusive` });
      }
    }
    if (typeof p?.nodePort === 'number' && p.nodePort !== 0 && type === 'ClusterIP') {
      errs.push({ field: `spec.ports[${i}].nodePort`, type: 'FieldValueForbidden', message: 'Forbidden: may not be used when `type` is \'ClusterIP\'' });
    }
    const tp = p?.targetPort;
    if (typeof tp === 'number' && tp !== 0 && (tp < 1 || tp > 65535)) {
      errs.push({ field: `spec.ports[${i}].targetPort`, type: 'FieldValueInvalid', message: `Invalid value: ${tp}: must be between 1 and 65535, inclusive` });
    }
    if (typeof tp === 'string') for (const m of portNameErrors(tp)) errs.push(invalid(`spec.ports[${i}].targetPort`, tp, m));
  });
  // kube's ValidateService: one node port per (protocol, nodePort), so a Service never claims one twice
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (typeof p?.nodePort !== 'number' || p.nodePort === 0) return;
    const key = `${typeof p.protocol === 'string' ? p.protocol : 'TCP'}/${p.nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate(`spec.ports[${i}].nodePort`, p.nodePort));
    nodePorts.add(key);
  });
  // kube's ValidateService: one port per (protocol, port); the value is the key as Go prints it
  const seen = new Set<string>();
  ports.forEach((p, i) => {
    const protocol = typeof p?.protocol === 'string' ? p.protocol : 'TCP';
    const key = `${protocol}/${String(p?.port)}`;
    if (seen.has(key)) {
      errs.push({
        field: `spec.ports[${i}]`, type: 'FieldValueDuplicate',
        message: `Duplicate value: core.ServicePort{Name:"", Protocol:${JSON.stringify(protocol)}, AppProtocol:(*string)(nil), Port:${String(p?.port)}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
      });
    }
    seen.add(key);
  });
  if (type === 'ExternalName' && typeof spec.externalName === 'string' && spec.externalName !== '') {
    // a trailing dot (an absolute name) is allowed, as kube's ValidateService
    const name = spec.externalName.endsWith('.') ? spec.externalName.slice(0, -1) : spec.externalName;
    for (const m of isDNS1123Subdomain(name)) errs.push({ field: 'spec.externalName', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(name)}: ${m}` });
  }
  errs.push(...clusterIPsErrors(spec));
  // kube's ValidateService: source ranges only for load balancers (at kube's field name, capital L)
  if (getArray(spec, 'loadBalancerSourceRanges').length > 0 && type !== 'LoadBalancer') {
    errs.push(forbidden('spec.LoadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
  }
  errs.push(...externalTrafficErrors(spec, type));
  errs.push(...loadBalancerClassErrors(o));
  return errs;
}

/** kube's ExternallyAccessible: NodePort, LoadBalancer, or a ClusterIP Service with external IPs */
const externallyAccessible = (spec: Obj, type: string): boolean =>
  type === 'NodePort' || type === 'LoadBalancer' || (type === 'ClusterIP' && getArray(spec, 'externalIPs').length > 0);

/** kube's validateServiceExternalTrafficPolicy, for what the defaults leave to check */
function externalTrafficErrors(spec: Obj, type: string): FieldError[] {
  const errs: FieldError[] = [];
  const policy = spec.externalTrafficPolicy;
  if (!externallyAccessible(spec, type) && policy !== undefined && policy !== null && policy !== '') {
    errs.push(invalid('spec.externalTrafficPolicy', policy, 'may only be set for externally-accessible services'));
  }
  const hc = spec.healthCheckNodePort;
  if (!(type === 'LoadBalancer' && policy === 'Local') && typeof hc === 'number' && hc !== 0) {
    errs.push(invalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  }
  return errs;
}

/** apimachinery's IsValidPortName (an IANA service name) */
export function portNameErrors(v: string): string[] {
  const errs: string[] = [];
  if (v.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(v)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  else if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)');
  if (v.includes('--')) errs.push('must not contain consecutive hyphens');
  if (v.startsWith('-') || v.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
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
