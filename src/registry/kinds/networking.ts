// networking.<domain>/v1 Ingress, IngressClass, NetworkPolicy; core/v1
// Endpoints and discovery.<domain>/v1 EndpointSlice. Stored and served; the
// endpoint and endpointslice controllers write the latter two
// (src/controllers/endpoints/); no ingress or network-policy controller acts
// on the rest (docs/compatibility.md).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString } from './columns.js';
import { atomicList, bool, enumOf, int32, intOrString, obj, opaque, proto, protoEmbedded, ref, str, strMap } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { selectorText } from './workload-shared.js';
import { immutable, invalid } from './field-errors.js';
import { isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';
import { isIP } from 'node:net';
import { each, whenPresent } from '../zero-shape.js';
import { defaultEndpoints, dropDeprecatedTopology, validateEndpointSlice, validateEndpointSliceUpdate, validateEndpoints } from './endpoints-validation.js';
import { validateIngressClassParameters } from './required-members.js';

const strings = (d: string): Schema => atomicList(d, { type: 'string' });

function backend(): Schema {
  return obj('A backend: a Service and port, or a typed resource.', proto({ service: 4, resource: 3 }, {
    service: obj('A Service as a backend.', proto({ name: 1, port: 2 }, {
      name: str('The referenced service.'),
      port: obj('The port of the referenced service.', proto({ name: 1, number: 2 }, { name: str('Name of the port.'), number: int32('Numerical port number.', { 'x-orch-proto-omit-zero': true }) })),
    }), ['name']),
    resource: obj('A typed object reference (TypedLocalObjectReference) in the same namespace.', proto({ apiGroup: 1, kind: 2, name: 3 }, {
      apiGroup: str('Group of the referenced resource; empty for the core group.'),
      kind: str('Kind of the referenced resource.'),
      name: str('Name of the referenced resource.'),
    })),
  }));
}

export function ingressDefinition(n: SchemaNames): ResourceDefinition {
  const group = n.group('networking');
  return {
    group, version: 'v1', kind: 'Ingress', resource: 'ingresses', singular: 'ingress', scope: 'Namespaced',
    shortNames: ['ing'], subresources: ['status'],
    schema: kindSchema(n, 'Ingress is a collection of rules that allow inbound connections to reach the endpoints defined by a backend.', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired state of the Ingress.', proto({ ingressClassName: 4, defaultBackend: 1, tls: 2, rules: 3 }, {
        ingressClassName: str('Name of the IngressClass resource.'),
        defaultBackend: backend(),
        tls: atomicList('TLS configuration.', obj('TLS for a set of hosts.', proto({ hosts: 1, secretName: 2 }, { hosts: strings('Hosts in the TLS certificate.'), secretName: str('Secret holding the certificate.') }))),
        // IngressRule's `http` is in the Go-inlined IngressRuleValue (field 2), where it is field 1
        rules: atomicList('Host rules.', obj('Maps paths under a host to backends.', proto({ host: 1 }, protoEmbedded(2, { http: 1 }, {
          host: str('Fully qualified domain name of a network host.'),
          http: obj('HTTP paths.', proto({ paths: 1 }, {
            paths: atomicList('Paths mapped to backends.', obj('A path and its backend.', proto({ path: 1, pathType: 3, backend: 2 }, {
              path: str('Matched against the path of an incoming request.'),
              pathType: enumOf('How the path is matched.', ['Exact', 'ImplementationSpecific', 'Prefix']),
              backend: backend(),
            }), ['pathType', 'backend'])),
          }), ['paths']),
        })))),
      })),
      status: obj('The current state of the Ingress.', proto({ loadBalancer: 1 }, { loadBalancer: obj('The load balancer status.', proto({ ingress: 1 }, {
        ingress: atomicList('Ingress points of the load balancer.', obj('A load-balancer ingress point.', proto({ ip: 1, hostname: 2, ports: 4 }, {
          ip: str('IP of an IP-based ingress point.'),
          hostname: str('Hostname of a DNS-based ingress point.'),
          ports: atomicList('Ports exposed by this load balancer.', obj('A port status.', proto({ port: 1, protocol: 2, error: 3 }, {
            port: int32('Port number.'), protocol: str('Protocol: TCP, UDP or SCTP.'), error: str('The problem with the port, if any.'),
          }), ['port', 'protocol'])),
        }))),
      })) })),
    })),
    strategy: {
      zeroShape: { spec: {}, status: { loadBalancer: {} } },
      validate: validateIngress,
      validateUpdate: (o) => validateIngress(o),
      columns: [
        column('Class', 'string', (o) => getString(o, 'spec', 'ingressClassName') ?? '<none>'),
        column('Hosts', 'string', (o) => getArray(o, 'spec', 'rules').map((r) => getString(r, 'host') ?? '*').join(',') || '*'),
        column('Address', 'string', (o) => getArray(o, 'status', 'loadBalancer', 'ingress').map((i) => getString(i, 'ip') ?? getString(i, 'hostname') ?? '').join(',')),
        column('Ports', 'string', (o) => (getArray(o, 'spec', 'tls').length > 0 ? '80, 443' : '80')),
      ],
    },
  };
}

function validateIngress(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  if (getArray(o, 'spec', 'rules').length === 0 && get(o, 'spec', 'defaultBackend') === undefined) {
    errs.push({ field: 'spec', type: 'FieldValueInvalid', message: 'Invalid value: either `defaultBackend` or `rules` must be specified' });
  }
  getArray(o, 'spec', 'rules').forEach((r, i) => errs.push(...validateIngressHost(getString(r, 'host'), `spec.rules[${i}].host`)));
  getArray(o, 'spec', 'rules').forEach((r, i) => getArray(r, 'http', 'paths').forEach((p, j) => {
    const path = getString(p, 'path');
    if (path !== undefined && !path.startsWith('/')) {
      errs.push({ field: `spec.rules[${i}].http.paths[${j}].path`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(path)}: must be an absolute path` });
    }
  }));
  return errs;
}

const WILDCARD_HOST = /^\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const WILDCARD_HOST_MSG = "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** kube's validateIngressRules for a rule's host: a DNS name (not an IP), `*.` allowed as its first label */
function validateIngressHost(host: string | undefined, at: string): FieldError[] {
  if (!host) return [];
  const errs: FieldError[] = [];
  if (isIP(host) !== 0) errs.push(invalid(at, host, 'must be a DNS name, not an IP address'));
  if (host.includes('*')) {
    if (host.length > 253 || !WILDCARD_HOST.test(host)) errs.push(invalid(at, host, WILDCARD_HOST_MSG));
    return errs;
  }
  for (const m of isDNS1123Subdomain(host)) errs.push(invalid(at, host, m));
  return errs;
}

export function ingressClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('networking'), version: 'v1', kind: 'IngressClass', resource: 'ingressclasses', singular: 'ingressclass', scope: 'Cluster',
    schema: kindSchema(n, 'IngressClass represents the class of the Ingress, referenced by the Ingress Spec.', proto({ spec: 2 }, {
      spec: obj('The IngressClass configuration.', proto({ controller: 1, parameters: 2 }, {
        controller: str('Name of the controller that should handle this class.'),
        parameters: obj('A link to a custom resource containing additional configuration for the controller.', proto({ apiGroup: 1, kind: 2, name: 3, scope: 4, namespace: 5 }, {
          apiGroup: str('Group of the referenced resource.'),
          kind: str('Kind of the referenced resource.'),
          name: str('Name of the referenced resource.'),
          scope: str('Cluster or Namespace.'),
          namespace: str('Namespace of the referenced resource (scope Namespace).'),
        })),
      })),
    })),
    strategy: {
      zeroShape: { spec: {} },
      // kube's SetDefaults_IngressClass: parameters without a scope are Cluster-scoped
      default: (o) => {
        const params = getObject(o, 'spec', 'parameters');
        if (params) params.scope ??= 'Cluster';
      },
      validate: (o) => validateIngressClassParameters(get(o, 'spec', 'parameters'), 'spec.parameters'),
      // kube's ValidateIngressClassUpdate
      validateUpdate: (o, old) => [
        ...immutable('spec.controller', get(o, 'spec', 'controller'), get(old, 'spec', 'controller')),
        ...validateIngressClassParameters(get(o, 'spec', 'parameters'), 'spec.parameters'),
      ],
      columns: [
        column('Controller', 'string', (o) => getString(o, 'spec', 'controller') ?? ''),
        column('Parameters', 'string', (o) => (getString(o, 'spec', 'parameters', 'name') ? `${getString(o, 'spec', 'parameters', 'kind') ?? ''}/${getString(o, 'spec', 'parameters', 'name')}` : '<none>')),
      ],
    },
  };
}

export function networkPolicyDefinition(n: SchemaNames): ResourceDefinition {
  const peer = obj('A peer of a rule: pods, namespaces or an IP block.', proto({ podSelector: 1, namespaceSelector: 2, ipBlock: 3 }, {
    podSelector: ref(n.meta('LabelSelector'), 'Pods selected by label.'),
    namespaceSelector: ref(n.meta('LabelSelector'), 'Namespaces selected by label.'),
    ipBlock: obj('A CIDR and exceptions.', proto({ cidr: 1, except: 2 }, { cidr: str('A CIDR.'), except: strings('CIDRs excluded.') }), ['cidr']),
  }));
  const port = obj('A port of a rule.', proto({ protocol: 1, port: 2, endPort: 3 }, {
    protocol: enumOf('The protocol.', ['SCTP', 'TCP', 'UDP']),
    port: intOrString('Port number or name.'),
    endPort: int32('End of a port range.'),
  }));
  return {
    group: n.group('networking'), version: 'v1', kind: 'NetworkPolicy', resource: 'networkpolicies', singular: 'networkpolicy', scope: 'Namespaced',
    shortNames: ['netpol'],
    schema: kindSchema(n, 'NetworkPolicy describes what network traffic is allowed for a set of Pods (stored; not enforced).', proto({ spec: 2 }, {
      spec: obj('The desired behaviour of this NetworkPolicy.', proto({ podSelector: 1, ingress: 2, egress: 3, policyTypes: 4 }, {
        podSelector: ref(n.meta('LabelSelector'), 'Pods this policy applies to; empty selects all pods in the namespace.'),
        ingress: atomicList('Ingress rules.', obj('Allowed ingress traffic.', proto({ ports: 1, from: 2 }, { ports: atomicList('Ports.', port), from: atomicList('Sources.', peer) }))),
        egress: atomicList('Egress rules.', obj('Allowed egress traffic.', proto({ ports: 1, to: 2 }, { ports: atomicList('Ports.', port), to: atomicList('Destinations.', peer) }))),
        policyTypes: strings('Rule types this policy relates to: Ingress, Egress.'),
      })),
    })),
    strategy: {
      zeroShape: { spec: { podSelector: {} } },
      default: (o) => {
        const spec = o.spec;
        if (!spec || typeof spec !== 'object' || Array.isArray(spec)) return;
        spec.podSelector ??= {};
        for (const dir of ['ingress', 'egress'] as const) {
          const rules = spec[dir];
          if (!Array.isArray(rules)) continue;
          for (const r of rules) for (const p of getArray(r, 'ports')) if (p && typeof p === 'object' && !Array.isArray(p)) p.protocol ??= 'TCP';
        }
        if (spec.policyTypes === undefined) spec.policyTypes = Array.isArray(spec.egress) ? ['Ingress', 'Egress'] : ['Ingress'];
      },
      columns: [column('Pod-Selector', 'string', (o) => selectorText(o, 'spec', 'podSelector'))],
    },
  };
}

export function endpointsDefinition(n: SchemaNames): ResourceDefinition {
  // an absent ip or port is kube's invalid value, not a missing one (endpoints-validation.ts)
  const addr = obj('An endpoint address.', proto({ ip: 1, hostname: 3, nodeName: 4, targetRef: 2 }, {
    ip: str('The IP of this endpoint.', CHECKED),
    hostname: str('The hostname of this endpoint.'),
    nodeName: str('The node hosting this endpoint.'),
    targetRef: ref(n.core('ObjectReference'), 'Reference to the object providing the endpoint.'),
  }), ['ip']);
  return {
    group: '', version: 'v1', kind: 'Endpoints', resource: 'endpoints', singular: 'endpoints', scope: 'Namespaced',
    shortNames: ['ep'],
    schema: kindSchema(n, 'Endpoints is a collection of endpoints that implement the actual service.', proto({ subsets: 2 }, {
      subsets: atomicList('The sets of addresses and ports that comprise a service.', obj('A group of addresses with a common set of ports.', proto({ addresses: 1, notReadyAddresses: 2, ports: 3 }, {
        addresses: atomicList('Ready addresses.', addr),
        notReadyAddresses: atomicList('Addresses not ready.', addr),
        ports: atomicList('Port numbers available.', obj('A port.', proto({ name: 1, port: 2, protocol: 3, appProtocol: 4 }, {
          // kube's SetDefaults_EndpointPort: TCP when unset
          name: str('Name of this port.'), port: int32('The port number.', CHECKED), protocol: str('IP protocol.', { default: 'TCP' }), appProtocol: str('Application protocol.'),
        }), ['port'])),
      }))),
    })),
    strategy: {
      default: defaultEndpoints,
      // kube's ValidateEndpointsUpdate is ValidateEndpoints after the metadata's update rules
      validate: validateEndpoints,
      columns: [column('Endpoints', 'string', (o) => {
        const out: string[] = [];
        for (const s of getArray(o, 'subsets')) for (const a of getArray(s, 'addresses')) for (const p of getArray(s, 'ports').length ? getArray(s, 'ports') : [{}]) {
          const port = get(p, 'port');
          out.push(port === undefined ? String(get(a, 'ip')) : `${String(get(a, 'ip'))}:${String(port)}`);
        }
        return out.length === 0 ? '<none>' : out.length > 3 ? `${out.slice(0, 3).join(',')} + ${out.length - 3} more...` : out.join(',');
      })],
    },
  };
}

export function endpointSliceDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('discovery'), version: 'v1', kind: 'EndpointSlice', resource: 'endpointslices', singular: 'endpointslice', scope: 'Namespaced',
    schema: kindSchema(n, 'EndpointSlice represents a subset of the endpoints that implement a service.', proto({ addressType: 4, endpoints: 2, ports: 3 }, {
      addressType: enumOf('Type of address carried by this slice.', ['FQDN', 'IPv4', 'IPv6'], CHECKED),
      endpoints: atomicList('Unique endpoints in this slice.', obj('A single logical backend.', proto({ addresses: 1, conditions: 2, hostname: 3, targetRef: 4, deprecatedTopology: 5, nodeName: 6, zone: 7, hints: 8 }, {
        addresses: { ...setListStr('Addresses of this endpoint.'), ...CHECKED },
        conditions: obj('Conditions of the endpoint.', proto({ ready: 1, serving: 2, terminating: 3 }, { ready: bool('Ready.'), serving: bool('Serving.'), terminating: bool('Terminating.') })),
        hostname: str('Hostname of this endpoint.'),
        targetRef: ref(n.core('ObjectReference'), 'Reference to the object representing this endpoint.'),
        deprecatedTopology: strMap('Deprecated topology information.'),
        nodeName: str('Node hosting this endpoint.'),
        zone: str('Zone this endpoint exists in.'),
        hints: obj('Hints for how this endpoint should be consumed.', proto({ forZones: 1 }, {
          forZones: atomicList('Zones this endpoint should be consumed by.', obj('A zone.', proto({ name: 1 }, { name: str('Zone name.') }))),
        })),
      }), ['addresses']), CHECKED),
      ports: atomicList('Network ports exposed by each endpoint.', obj('A port.', proto({ name: 1, protocol: 2, port: 3, appProtocol: 4 }, {
        // discovery/v1 SetDefaults_EndpointPort: an unset name is "", an unset protocol TCP
        name: str('Name of this port.', { default: '' }), protocol: str('IP protocol.', { default: 'TCP' }), port: int32('The port number.'), appProtocol: str('Application protocol.'),
      }))),
    }), ['addressType', 'endpoints']),
    strategy: {
      // a ForZone's name has no omitempty (kube accepts an empty one: a valid label value)
      zeroShape: { endpoints: each({ conditions: {}, hints: whenPresent({ forZones: each({ name: '' }) }) }) },
      prepareForCreate: (o) => dropDeprecatedTopology(o),
      prepareForUpdate: (o, old) => dropDeprecatedTopology(o, old),
      validate: validateEndpointSlice,
      validateUpdate: validateEndpointSliceUpdate,
      columns: [
        column('AddressType', 'string', (o) => getString(o, 'addressType') ?? ''),
        column('Ports', 'string', (o) => getArray(o, 'ports').map((p) => String(get(p, 'port') ?? '')).join(',') || '<unset>'),
        column('Endpoints', 'string', (o) => getArray(o, 'endpoints').flatMap((e) => getArray(e, 'addresses').map(String)).join(',') || '<unset>'),
      ],
    },
  };
}

const setListStr = (d: string): Schema => ({ ...strings(d), 'x-orch-list-type': 'set' });
/** presence and values kube's validation words itself (endpoints-validation.ts); OpenAPI keeps them required */
const CHECKED = { 'x-orch-strategy-checked': true } as const;

export const networkingFactories = [ingressDefinition, ingressClassDefinition, networkPolicyDefinition, endpointsDefinition, endpointSliceDefinition];
