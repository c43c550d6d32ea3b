// kube 1.32's checks of core/v1 Endpoints (pkg/apis/core/validation:
// ValidateEndpoints, validateEndpointSubsets, validateEndpointAddress,
// validateEndpointPort) and discovery/v1 EndpointSlice
// (pkg/apis/discovery/validation: ValidateEndpointSlice, ValidateEndpointSliceUpdate),
// with the v1 defaults and strategy steps they rely on. Metadata is checked by
// the store (kube's ValidateObjectMeta with NameIsDNSSubdomain).

import { deepEqual } from '../../machinery/meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from '../../machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { getArray } from './columns.js';
import { duplicate, immutable, invalid, notSupported, required, tooMany } from './field-errors.js';
import { ipErrors, nonSpecialIPErrors, parseIP } from './ip-address.js';

type Obj = Record<string, JSONValue>;

/**
 * Where orch parts from kube: Endpoints and slices may hold a loopback address. orch has no pod
 * network or kube-proxy; what a Service fronts on a member's host (a webhook, an aggregated server,
 * the API itself on its default 127.0.0.1) is reached on loopback (docs/services.md "Loopback endpoints").
 */
export const LOOPBACK_ENDPOINTS = true;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const objects = (o: unknown, key: string): Obj[] => getArray(o, key).map((v) => (isObj(v) ? v : {}));

/** kube's supportedPortProtocols, sorted as its messages list them */
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
/** kube's discovery validation limits (maxEndpoints, maxAddresses, maxPorts, maxZoneHints) */
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_ZONE_HINTS = 8;

const label = (at: string, v: string, errs: FieldError[]): void => {
  for (const m of isDNS1123Label(v)) errs.push(invalid(at, v, m));
};
/** kube's ValidateNodeName (NameIsDNSSubdomain) for a set pointer, "" included */
const nodeName = (at: string, v: JSONValue | undefined, errs: FieldError[]): void => {
  if (typeof v === 'string') for (const m of isDNS1123Subdomain(v)) errs.push(invalid(at, v, m));
};
/** an appProtocol that is set, "" included, is a qualified name (ValidateQualifiedName) */
const appProtocol = (at: string, v: JSONValue | undefined, errs: FieldError[]): void => {
  if (typeof v === 'string') for (const m of isQualifiedName(v)) errs.push(invalid(at, v, m));
};

/** v1 SetDefaults_Endpoints: a port's empty protocol is TCP (an absent one the schema defaults) */
export function defaultEndpoints(o: ApiObject): void {
  for (const ss of objects(o, 'subsets')) for (const p of objects(ss, 'ports')) if (p.protocol === '') p.protocol = 'TCP';
}

/** kube's ValidateEndpoints without the metadata: each subset's addresses and ports */
export function validateEndpoints(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  objects(o, 'subsets').forEach((ss, i) => {
    const at = `subsets[${i}]`;
    const ready = objects(ss, 'addresses');
    const notReady = objects(ss, 'notReadyAddresses');
    // a headless Service's subset may have no ports, never no address
    if (ready.length === 0 && notReady.length === 0) errs.push(required(at, 'must specify `addresses` or `notReadyAddresses`'));
    ready.forEach((a, j) => addressErrors(a, `${at}.addresses[${j}]`, errs));
    notReady.forEach((a, j) => addressErrors(a, `${at}.notReadyAddresses[${j}]`, errs));
    const ports = objects(ss, 'ports');
    ports.forEach((p, j) => portErrors(p, ports.length > 1, `${at}.ports[${j}]`, errs));
  });
  return errs;
}

/**
 * kube's validateEndpointAddress: IsValidIP, the hostname, the node, then ValidateNonSpecialIP (targetRef is
 * not checked), loopback allowed (LOOPBACK_ENDPOINTS)
 */
function addressErrors(a: Obj, at: string, errs: FieldError[]): void {
  const ip = typeof a.ip === 'string' ? a.ip : '';
  errs.push(...ipErrors(`${at}.ip`, ip));
  if (typeof a.hostname === 'string' && a.hostname !== '') label(`${at}.hostname`, a.hostname, errs);
  nodeName(`${at}.nodeName`, a.nodeName, errs);
  errs.push(...nonSpecialIPErrors(`${at}.ip`, ip, LOOPBACK_ENDPOINTS));
}

/** kube's validateEndpointPort: a name when there are several (not checked for uniqueness), the number, the protocol */
function portErrors(p: Obj, requireName: boolean, at: string, errs: FieldError[]): void {
  const name = typeof p.name === 'string' ? p.name : '';
  if (requireName && name === '') errs.push(required(`${at}.name`));
  else if (name !== '') label(`${at}.name`, name, errs);
  const port = typeof p.port === 'number' ? p.port : 0;
  if (port < 1 || port > 65535) errs.push(invalid(`${at}.port`, port, 'must be between 1 and 65535, inclusive'));
  const protocol = typeof p.protocol === 'string' ? p.protocol : '';
  if (protocol === '') errs.push(required(`${at}.protocol`));
  else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(`${at}.protocol`, protocol, PROTOCOLS));
  appProtocol(`${at}.appProtocol`, p.appProtocol, errs);
}

/**
 * The discovery strategy's dropTopologyOnV1: a v1 write's `deprecatedTopology` is
 * silently dropped, unless an update leaves the endpoints as they were
 */
export function dropDeprecatedTopology(o: ApiObject, old?: ApiObject): void {
  if (old && deepEqual(getArray(o, 'endpoints'), getArray(old, 'endpoints'))) return;
  for (const ep of objects(o, 'endpoints')) delete ep.deprecatedTopology;
}

/** kube's ValidateEndpointSlice without the metadata: the address type, the endpoints, the ports */
export function validateEndpointSlice(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const type = typeof o.addressType === 'string' ? o.addressType : '';
  if (type === '') errs.push(required('addressType'));
  else if (!ADDRESS_TYPES.includes(type)) errs.push(notSupported('addressType', type, ADDRESS_TYPES));
  sliceEndpointErrors(objects(o, 'endpoints'), type, errs);
  slicePortErrors(objects(o, 'ports'), errs);
  return errs;
}

/** kube's ValidateEndpointSliceUpdate: the slice as on create, then the address type kept */
export function validateEndpointSliceUpdate(o: ApiObject, old: ApiObject): FieldError[] {
  return [...validateEndpointSlice(o), ...immutable('addressType', o.addressType, old.addressType)];
}

function sliceEndpointErrors(endpoints: Obj[], type: string, errs: FieldError[]): void {
  if (endpoints.length > MAX_ENDPOINTS) {
    errs.push(tooMany('endpoints', endpoints.length, MAX_ENDPOINTS));
    return;
  }
  endpoints.forEach((ep, i) => {
    const at = `endpoints[${i}]`;
    const addresses = getArray(ep, 'addresses').map(String);
    if (addresses.length === 0) errs.push(required(`${at}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(`${at}.addresses`, addresses.length, MAX_ADDRESSES));
    // an unknown address type leaves the addresses unchecked, as kube's switch does
    addresses.forEach((a, j) => addressOfType(a, type, `${at}.addresses[${j}]`, errs));
    nodeName(`${at}.nodeName`, ep.nodeName, errs);
    // an explicit "" is a set pointer: checked
    if (typeof ep.hostname === 'string') label(`${at}.hostname`, ep.hostname, errs);
    if (isObj(ep.hints)) hintErrors(ep.hints, `${at}.hints`, errs);
  });
}

function addressOfType(a: string, type: string, at: string, errs: FieldError[]): void {
  if (type === 'FQDN') {
    errs.push(...fqdnErrors(at, a));
    return;
  }
  if (type !== 'IPv4' && type !== 'IPv6') return;
  // IsValidIPv4Address / IsValidIPv6Address (an IPv4-mapped IPv6 address is IPv4, Go's To4), then ValidateNonSpecialIP
  const bytes = parseIP(a)?.length;
  if (type === 'IPv4' && bytes !== 4) errs.push(invalid(at, a, 'must be a valid IPv4 address'));
  if (type === 'IPv6' && bytes !== 16) errs.push(invalid(at, a, 'must be a valid IPv6 address'));
  errs.push(...nonSpecialIPErrors(at, a, LOOPBACK_ENDPOINTS));
}

/** apimachinery's IsFullyQualifiedDomainName: a DNS subdomain of two labels or more, a trailing dot allowed */
function fqdnErrors(at: string, value: string): FieldError[] {
  if (value === '') return [required(at)];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const sub = isDNS1123Subdomain(name);
  if (sub.length > 0) return [invalid(at, name, sub.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) return [invalid(at, name, 'should be a domain with at least two segments separated by dots')];
  for (const l of labels) {
    const bad = isDNS1123Label(l);
    if (bad.length > 0) return [invalid(at, l, bad.join(','))];
  }
  return [];
}

/** kube's validateHints: at most 8 zones, each named once with a label value */
function hintErrors(hints: Obj, at: string, errs: FieldError[]): void {
  const zones = objects(hints, 'forZones');
  if (zones.length > MAX_ZONE_HINTS) {
    errs.push(tooMany(`${at}.forZones`, zones.length, MAX_ZONE_HINTS));
    return;
  }
  const seen = new Set<string>();
  zones.forEach((z, i) => {
    const path = `${at}.forZones[${i}].name`;
    const name = typeof z.name === 'string' ? z.name : '';
    if (seen.has(name)) errs.push(duplicate(path, name));
    else seen.add(name);
    for (const m of isValidLabelValue(name)) errs.push(invalid(path, name, m));
  });
}

/** kube's validatePorts: names unique (an absent one is ""), a protocol of three, the appProtocol; numbers unchecked */
function slicePortErrors(ports: Obj[], errs: FieldError[]): void {
  if (ports.length > MAX_PORTS) {
    errs.push(tooMany('ports', ports.length, MAX_PORTS));
    return;
  }
  const names = new Set<string>();
  ports.forEach((p, i) => {
    const at = `ports[${i}]`;
    const name = typeof p.name === 'string' ? p.name : '';
    if (name !== '') label(`${at}.name`, name, errs);
    if (names.has(name)) errs.push(duplicate(`${at}.name`, name));
    else names.add(name);
    // the schema defaults an absent protocol to TCP (discovery/v1 SetDefaults_EndpointPort)
    if (typeof p.protocol !== 'string') errs.push(required(`${at}.protocol`));
    else if (!PROTOCOLS.includes(p.protocol)) errs.push(notSupported(`${at}.protocol`, p.protocol, PROTOCOLS));
    appProtocol(`${at}.appProtocol`, p.appProtocol, errs);
  });
}
