// networking.<domain>/v1 Ingress, IngressClass and NetworkPolicy (issue #11
// item 4): stored and served, no ingress or policy controller acts on them.

import type { SchemaNames } from '../schema/naming.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../types.js';
import { column, get, getArray, getString } from './columns.js';
import { atomicList, enumOf, int32, obj, opaque, str } from './dsl.js';
import { kindSchema } from './meta.js';
import { selectorText } from './scale.js';
import { labelSelector, setDefault } from './workload-common.js';

export function ingressDefinition(n: SchemaNames): ResourceDefinition {
  const backend = obj('Where traffic goes.', {
    service: obj('A Service backend.', {
      name: str('Name of the Service.'),
      port: obj('Port of the Service.', { name: str('Port name.'), number: int32('Port number.') }),
    }, ['name']),
    resource: opaque('A typed object reference backend.'),
  });
  return {
    group: n.group('networking'),
    version: 'v1',
    kind: 'Ingress',
    resource: 'ingresses',
    singular: 'ingress',
    scope: 'Namespaced',
    shortNames: ['ing'],
    subresources: ['status'],
    schema: kindSchema(n, 'Ingress is a collection of rules that allow inbound connections to reach Services.', {
      spec: obj('Desired state of the Ingress.', {
        ingressClassName: str('Name of the IngressClass.'),
        defaultBackend: backend,
        tls: atomicList('TLS configuration.', obj('One TLS entry.', { hosts: atomicList('Hosts of the certificate.', str('A host.')), secretName: str('Secret holding the certificate.') })),
        rules: atomicList('Host rules.', obj('One host rule.', {
          host: str('Fully qualified domain name.'),
          http: obj('HTTP paths.', {
            paths: atomicList('Paths to backends.', obj('One path.', {
              path: str('Path matched against the request.'),
              pathType: enumOf('How the path is matched.', ['Exact', 'ImplementationSpecific', 'Prefix']),
              backend,
            }, ['pathType', 'backend'])),
          }, ['paths']),
        })),
      }),
      status: obj('Current state.', { loadBalancer: opaque('Load balancer state.') }),
    }),
    strategy: {
      tracksGeneration: true,
      validate: validateIngress,
      validateUpdate: (o) => validateIngress(o),
      columns: [
        column('Class', 'string', (o) => getString(o, 'spec', 'ingressClassName') ?? '<none>', { description: 'Ingress class.' }),
        column('Hosts', 'string', (o) => getArray(o, 'spec', 'rules').map((r) => getString(r, 'host') ?? '*').join(',') || '*', { description: 'Hosts.' }),
        column('Address', 'string', (o) => getArray(o, 'status', 'loadBalancer', 'ingress').map((i) => getString(i, 'ip') ?? getString(i, 'hostname') ?? '').join(','), { description: 'Addresses.' }),
        column('Ports', 'string', (o) => (getArray(o, 'spec', 'tls').length > 0 ? '80, 443' : '80'), { description: 'Ports.' }),
      ],
    },
  };
}

function validateIngress(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  if (get(o, 'spec', 'defaultBackend') === undefined && getArray(o, 'spec', 'rules').length === 0) {
    errs.push({ field: 'spec.rules', type: 'FieldValueRequired', message: 'Required value: either `defaultBackend` or `rules` must be specified' });
  }
  getArray(o, 'spec', 'rules').forEach((r, i) => {
    getArray(r, 'http', 'paths').forEach((p, j) => {
      const path = getString(p, 'path');
      const type = getString(p, 'pathType');
      if ((type === 'Exact' || type === 'Prefix') && (!path || !path.startsWith('/'))) {
        errs.push({ field: `spec.rules[${i}].http.paths[${j}].path`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(path ?? '')}: must be an absolute path` });
      }
    });
  });
  return errs;
}

export function ingressClassDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('networking'),
    version: 'v1',
    kind: 'IngressClass',
    resource: 'ingressclasses',
    singular: 'ingressclass',
    scope: 'Cluster',
    schema: kindSchema(n, 'IngressClass represents the class of the Ingress, referenced by the Ingress spec.', {
      spec: obj('Desired state of the class.', {
        controller: str('Name of the controller that implements the class.'),
        parameters: opaque('Configuration of the controller.'),
      }),
    }),
    strategy: {
      tracksGeneration: true,
      columns: [
        column('Controller', 'string', (o) => getString(o, 'spec', 'controller') ?? '', { description: 'Controller.' }),
        column('Parameters', 'string', (o) => (get(o, 'spec', 'parameters') ? String(getString(o, 'spec', 'parameters', 'name') ?? '') : '<none>'), { description: 'Parameters.' }),
      ],
    },
  };
}

export function networkPolicyDefinition(n: SchemaNames): ResourceDefinition {
  const peer = obj('A set of peers.', {
    podSelector: labelSelector(n, 'Pods selected.'),
    namespaceSelector: labelSelector(n, 'Namespaces selected.'),
    ipBlock: obj('An IP range.', { cidr: str('The range.'), except: atomicList('Ranges excluded.', str('A range.')) }, ['cidr']),
  });
  const port = obj('A port.', { protocol: enumOf('Protocol; default TCP.', ['SCTP', 'TCP', 'UDP']), port: { description: 'Port number or name.', 'x-orch-int-or-string': true }, endPort: int32('End of a port range.') });
  return {
    group: n.group('networking'),
    version: 'v1',
    kind: 'NetworkPolicy',
    resource: 'networkpolicies',
    singular: 'networkpolicy',
    scope: 'Namespaced',
    shortNames: ['netpol'],
    schema: kindSchema(n, 'NetworkPolicy describes what network traffic is allowed for a set of Pods.', {
      spec: obj('Desired behaviour of the policy.', {
        podSelector: labelSelector(n, 'Pods the policy applies to; empty selects every pod of the namespace.'),
        ingress: atomicList('Allowed incoming traffic.', obj('One ingress rule.', { ports: atomicList('Ports.', port), from: atomicList('Sources.', peer) })),
        egress: atomicList('Allowed outgoing traffic.', obj('One egress rule.', { ports: atomicList('Ports.', port), to: atomicList('Destinations.', peer) })),
        policyTypes: atomicList('Ingress, Egress or both.', enumOf('A policy type.', ['Egress', 'Ingress'])),
      }, ['podSelector']),
    }),
    strategy: {
      tracksGeneration: true,
      default(o) {
        for (const dir of ['ingress', 'egress'] as const) {
          for (const rule of getArray(o, 'spec', dir)) {
            for (const p of getArray(rule, 'ports')) if (p && typeof p === 'object' && !Array.isArray(p)) p.protocol ??= 'TCP';
          }
        }
        if (get(o, 'spec', 'policyTypes') === undefined && get(o, 'spec')) {
          setDefault(o, get(o, 'spec', 'egress') !== undefined ? ['Ingress', 'Egress'] : ['Ingress'], 'spec', 'policyTypes');
        }
      },
      columns: [column('Pod-Selector', 'string', (o) => selectorText(get(o, 'spec', 'podSelector')) || '<none>', { description: 'Pods the policy applies to.' })],
    },
  };
}
