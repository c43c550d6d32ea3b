// kube 1.32's ValidateService (pkg/apis/core/validation), in kube's order: what
// each type allows (headless only for ClusterIP, no cluster IPs or IP families
// for ExternalName), ports, cluster IPs, external IPs, node ports, load
// balancer fields, traffic policies. Requested node ports and health check
// node ports are checked against the range when they are claimed
// (src/registry/allocators/service-allocator.ts), as kube's allocators do.

import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { getArray, getObject } from './columns.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';
import { duplicate, forbidden, invalid, required } from './field-errors.js';
import { ipErrors, nonSpecialIPErrors } from './ip-address.js';
import { clusterIPsErrors, effectiveClusterIPs } from './service-ips.js';
import { loadBalancerClassErrors, needsHealthCheck } from './service-update.js';

type Obj = Record<string, JSONValue>;

export const serviceType = (spec: Obj): string => (typeof spec.type === 'string' ? spec.type : 'ClusterIP');
const set = (v: JSONValue | undefined): boolean => v !== undefined && v !== null;
const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const portNumberErrors = (field: string, v: JSONValue | undefined): FieldError[] => (typeof v === 'number' && (v < 1 || v > 65535) ? [invalid(field, v, PORT_RANGE)] : []);

/** kube's ExternallyAccessible: NodePort, LoadBalancer, or a ClusterIP Service with external IPs */
export const externallyAccessible = (spec: Obj, type = serviceType(spec)): boolean =>
  type === 'NodePort' || type === 'LoadBalancer' || (type === 'ClusterIP' && getArray(spec, 'externalIPs').length > 0);

/** kube's ValidateService, for what the schema and the defaults leave to check */
export function validateService(o: ApiObject): FieldError[] {
  const spec = getObject(o, 'spec') ?? {};
  const type = serviceType(spec);
  const ports = getArray(spec, 'ports') as Obj[];
  const ips = effectiveClusterIPs(spec);
  const headless = ips.length === 1 && ips[0] === 'None';
  const errs: FieldError[] = [];
  if (ports.length === 0 && !headless && type !== 'ExternalName') errs.push(required('spec.ports'));
  errs.push(...typeErrors(spec, type, ips, headless));
  const names = new Set<string>();
  ports.forEach((p, i) => errs.push(...servicePortErrors(p, i, ports.length > 1, names)));
  errs.push(...clusterIPsErrors(spec));
  getArray(spec, 'externalIPs').forEach((ip, i) => {
    const bad = ipErrors(`spec.externalIPs[${i}]`, String(ip));
    errs.push(...(bad.length > 0 ? bad : nonSpecialIPErrors(`spec.externalIPs[${i}]`, String(ip))));
  });
  if (type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (typeof p?.nodePort === 'number' && p.nodePort !== 0) errs.push(forbidden(`spec.ports[${i}].nodePort`, "may not be used when `type` is 'ClusterIP'"));
    });
  }
  errs.push(...duplicatePortErrors(ports));
  // source ranges only for load balancers (at kube's field name, capital L)
  if (getArray(spec, 'loadBalancerSourceRanges').length > 0 && type !== 'LoadBalancer') {
    errs.push(forbidden('spec.LoadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
  }
  // defaulted (true) on every LoadBalancer write, so kube's Required for a LoadBalancer without it cannot happen
  if (set(spec.allocateLoadBalancerNodePorts) && type !== 'LoadBalancer') {
    errs.push(forbidden('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  }
  errs.push(...loadBalancerClassErrors(o));
  errs.push(...externalTrafficErrors(spec, type));
  return errs;
}

/** kube's per-type checks: no headless NodePort or LoadBalancer; an ExternalName has a DNS name and no cluster IPs */
function typeErrors(spec: Obj, type: string, ips: string[], headless: boolean): FieldError[] {
  if (type === 'LoadBalancer' || type === 'NodePort') {
    return headless ? [invalid('spec.clusterIPs[0]', ips[0], `may not be set to 'None' for ${type} services`)] : [];
  }
  if (type !== 'ExternalName') return [];
  const errs: FieldError[] = [];
  const notHere = 'may not be set for ExternalName services';
  // kube looks at clusterIPs after lining them up with clusterIP: a clusterIP alone counts
  if (ips.length > 0) errs.push(forbidden('spec.clusterIPs', notHere));
  if (getArray(spec, 'ipFamilies').length > 0) errs.push(forbidden('spec.ipFamilies', notHere));
  if (set(spec.ipFamilyPolicy)) errs.push(forbidden('spec.ipFamilyPolicy', notHere));
  // a trailing dot (an absolute name) is allowed
  const name = typeof spec.externalName === 'string' ? spec.externalName.replace(/\.$/, '') : '';
  if (name === '') errs.push(required('spec.externalName'));
  else errs.push(...isDNS1123Subdomain(name).map((m) => invalid('spec.externalName', name, m)));
  return errs;
}

/** kube's validateServicePort: names (required when several), port numbers, targetPort number or IANA name */
function servicePortErrors(p: Obj, i: number, several: boolean, names: Set<string>): FieldError[] {
  const at = `spec.ports[${i}]`;
  const errs: FieldError[] = [];
  const name = typeof p?.name === 'string' ? p.name : '';
  if (several && !name) errs.push(required(`${at}.name`));
  else if (name) {
    errs.push(...isDNS1123Label(name).map((m) => invalid(`${at}.name`, name, m)));
    if (names.has(name)) errs.push(duplicate(`${at}.name`, name));
    names.add(name);
  }
  errs.push(...portNumberErrors(`${at}.port`, p?.port));
  const tp = p?.targetPort;
  if (typeof tp === 'number' && tp !== 0) errs.push(...portNumberErrors(`${at}.targetPort`, tp));
  if (typeof tp === 'string') errs.push(...portNameErrors(tp).map((m) => invalid(`${at}.targetPort`, tp, m)));
  return errs;
}

/** kube's ValidateService: one node port per (protocol, nodePort), one port per (protocol, port); the value as Go prints the key */
function duplicatePortErrors(ports: Obj[]): FieldError[] {
  const errs: FieldError[] = [];
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (typeof p?.nodePort !== 'number' || p.nodePort === 0) return;
    const key = `${typeof p.protocol === 'string' ? p.protocol : 'TCP'}/${p.nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate(`spec.ports[${i}].nodePort`, p.nodePort));
    nodePorts.add(key);
  });
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
  return errs;
}

/**
 * kube's validateServiceExternalTrafficPolicy, for what the defaults leave to check. A Service that
 * needs a health check node port has one by the time kube validates it (allocated first); here the
 * allocator, after validation, claims or picks it, so only a given one is checked
 */
function externalTrafficErrors(spec: Obj, type: string): FieldError[] {
  const errs: FieldError[] = [];
  const policy = spec.externalTrafficPolicy;
  if (!externallyAccessible(spec, type) && set(policy) && policy !== '') {
    errs.push(invalid('spec.externalTrafficPolicy', policy, 'may only be set for externally-accessible services'));
  }
  const hc = spec.healthCheckNodePort;
  if (!needsHealthCheck(spec)) {
    if (typeof hc === 'number' && hc !== 0) errs.push(invalid('spec.healthCheckNodePort', hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (typeof hc === 'number' && hc !== 0) {
    errs.push(...portNumberErrors('spec.healthCheckNodePort', hc));
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
