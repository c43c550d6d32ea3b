// flowcontrol.apiserver.<domain>/v1 FlowSchema and PriorityLevelConfiguration
// (spec 000 §9 deprecation table): stored and served with kube 1.32's
// defaults and validation (flowcontrol-validation.ts). They do not drive this
// server's overload protection, whose levels are built in
// (src/gateway/flowcontrol/, docs/reliability.md "Overload protection").
// Fields kube requires are not marked `required` in the schema: the strategy
// reports them missing with kube's paths and messages (and only once).

import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ApiObject, ResourceDefinition } from '../types.js';
import { column, get, getArray, getObject, getString, since } from './columns.js';
import { atomicList, bool, int32, listMap, obj, proto, setList, str, time } from '../../machinery/schema/dsl.js';
import { kindSchema } from './meta.js';
import { defaultFlowSchema, defaultPriorityLevel, validateFlowSchema, validatePriorityLevel } from './flowcontrol-validation.js';
import { SPEC_STATUS_SHAPE } from '../zero-shape.js';

const strings = (d: string): Schema => setList(d, { type: 'string' });
// the strategy checks these values (kube's NotSupported, also for an absent value), so the schema carries no `enum`
const oneOf = (d: string, values: string[]): Schema => str(`${d}\n\nPossible enum values: ${values.map((v) => `"${v}"`).join(', ')}`);
const named = (d: string): Schema => obj(d, proto({ name: 1 }, { name: str('The name.') }));

function conditions(what: string): Schema {
  return obj(`The current state of the ${what}.`, proto({ conditions: 1 }, {
    conditions: listMap(`The current conditions of the ${what}.`, obj('A condition.', proto({ type: 1, status: 2, lastTransitionTime: 3, reason: 4, message: 5 }, {
      type: str('Type of the condition.'),
      status: str('Status of the condition: True, False or Unknown.'),
      lastTransitionTime: time('Last time the condition changed status.'),
      reason: str('One-word CamelCase reason of the last transition.'),
      message: str('Human-readable details of the last transition.'),
    }), ['type']), ['type'], 'type'),
  }));
}

function rulesWithSubjects(): Schema {
  const subject = obj('A request originator: a user, a group or a service account.', proto({ kind: 1, user: 2, group: 3, serviceAccount: 4 }, {
    kind: oneOf('Which of the other fields is set.', ['Group', 'ServiceAccount', 'User']),
    user: named('Matches a user name ("*" for all).'),
    group: named('Matches a user group ("*" for all).'),
    serviceAccount: obj('Matches service accounts.', proto({ namespace: 1, name: 2 }, {
      namespace: str('Namespace of the service accounts.'),
      name: str('Name of the service account, or "*".'),
    })),
  }));
  const resourceRule = obj('Matches resource requests by verb, API group, resource and namespace.', proto({ verbs: 1, apiGroups: 2, resources: 3, clusterScope: 4, namespaces: 5 }, {
    verbs: strings('Matching verbs ("*" for all).'),
    apiGroups: strings('Matching API groups ("*" for all).'),
    resources: strings('Matching resources, with sub-resource if wanted ("*" for all).'),
    clusterScope: bool('Whether requests without a namespace match.'),
    namespaces: strings('Matching namespaces ("*" for any namespace).'),
  }));
  const nonResourceRule = obj('Matches non-resource requests by verb and URL.', proto({ verbs: 1, nonResourceURLs: 6 }, {
    verbs: strings('Matching verbs ("*" for all).'),
    nonResourceURLs: strings('Matching URL prefixes ("*" for all; a trailing "/*" globs).'),
  }));
  return obj('Requests of these subjects matching one of these rules.', proto({ subjects: 1, resourceRules: 2, nonResourceRules: 3 }, {
    subjects: atomicList('The users, groups or service accounts the rule applies to.', subject),
    resourceRules: atomicList('Rules matching resource requests.', resourceRule),
    nonResourceRules: atomicList('Rules matching non-resource requests.', nonResourceRule),
  }));
}

export function flowSchemaDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: n.group('flowcontrol.apiserver'), version: 'v1', kind: 'FlowSchema', resource: 'flowschemas', singular: 'flowschema', scope: 'Cluster',
    subresources: ['status'],
    schema: kindSchema(n, 'FlowSchema defines the schema of a group of flows (stored; this server\'s overload protection uses built-in levels instead).', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired behaviour of the flow schema.', proto({ priorityLevelConfiguration: 1, matchingPrecedence: 2, distinguisherMethod: 3, rules: 4 }, {
        priorityLevelConfiguration: named('The PriorityLevelConfiguration matching requests are assigned to.'),
        matchingPrecedence: int32('Precedence among matching schemas, 1 to 10000, lowest first. Defaults to 1000.'),
        distinguisherMethod: obj('How the flow distinguisher of a matching request is computed (none when absent).', proto({ type: 1 }, {
          type: oneOf('The distinguisher method.', ['ByNamespace', 'ByUser']),
        })),
        rules: atomicList('The requests matching this schema; it matches a request when one rule does.', rulesWithSubjects()),
      })),
      status: conditions('flow schema'),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      tracksGeneration: true,
      default: defaultFlowSchema,
      validate: validateFlowSchema,
      validateUpdate: (o) => validateFlowSchema(o),
      // kube prints Age before MissingPL
      exactColumns: true,
      columns: [
        column('PriorityLevel', 'string', (o) => getString(o, 'spec', 'priorityLevelConfiguration', 'name') ?? ''),
        column('MatchingPrecedence', 'string', (o) => (typeof get(o, 'spec', 'matchingPrecedence') === 'number' ? Number(get(o, 'spec', 'matchingPrecedence')) : 0)),
        column('DistinguisherMethod', 'string', (o) => getString(o, 'spec', 'distinguisherMethod', 'type') ?? '*'),
        column('Age', 'string', (o, now) => since(o.metadata?.creationTimestamp, now)),
        column('MissingPL', 'string', (o) => getString(getArray(o, 'status', 'conditions').find((c) => getString(c, 'type') === 'Dangling'), 'status') ?? '?'),
      ],
    },
  };
}

export function priorityLevelDefinition(n: SchemaNames): ResourceDefinition {
  const shares = (d: string) => int32(d);
  const queued = (o: ApiObject, k: string): string | number => {
    const v = get(o, 'spec', 'limited', 'limitResponse', 'queuing', k);
    return getObject(o, 'spec', 'limited') && typeof v === 'number' ? v : '<none>';
  };
  return {
    group: n.group('flowcontrol.apiserver'), version: 'v1', kind: 'PriorityLevelConfiguration', resource: 'prioritylevelconfigurations', singular: 'prioritylevelconfiguration', scope: 'Cluster',
    subresources: ['status'],
    schema: kindSchema(n, 'PriorityLevelConfiguration represents the configuration of a priority level (stored; this server\'s overload protection uses built-in levels instead).', proto({ spec: 2, status: 3 }, {
      spec: obj('The desired behaviour of the priority level.', proto({ type: 1, limited: 2, exempt: 3 }, {
        type: oneOf('Whether requests of this level are subject to limits.', ['Exempt', 'Limited']),
        limited: obj('How requests of a Limited level are handled.', proto({ nominalConcurrencyShares: 1, limitResponse: 2, lendablePercent: 3, borrowingLimitPercent: 4 }, {
          nominalConcurrencyShares: shares('The share of the server\'s concurrency limit nominally reserved for this level. Defaults to 30 when unspecified; 0 is allowed.'),
          limitResponse: obj('What to do with requests that cannot be executed right now.', proto({ type: 1, queuing: 2 }, {
            type: oneOf('Queue or Reject.', ['Queue', 'Reject']),
            queuing: obj('Queuing parameters (type Queue only).', proto({ queues: 1, handSize: 2, queueLengthLimit: 3 }, {
              queues: int32('Number of queues. Defaults to 64.'),
              handSize: int32('Shuffle-sharding hand size. Defaults to 8.'),
              queueLengthLimit: int32('Maximum requests waiting in one queue. Defaults to 50.'),
            })),
          })),
          lendablePercent: int32('Percentage of the nominal limit other levels may borrow, 0 to 100. Defaults to 0.'),
          borrowingLimitPercent: int32('Limit on the seats this level may borrow, as a percentage of its nominal limit.'),
        })),
        exempt: obj('Tunables of an Exempt level.', proto({ nominalConcurrencyShares: 1, lendablePercent: 2 }, {
          nominalConcurrencyShares: shares('Nominal concurrency shares. Defaults to 0.'),
          lendablePercent: int32('Percentage of the nominal limit other levels may borrow. Defaults to 0.'),
        })),
      })),
      status: conditions('priority level'),
    })),
    strategy: {
      zeroShape: SPEC_STATUS_SHAPE,
      tracksGeneration: true,
      default: defaultPriorityLevel,
      validate: validatePriorityLevel,
      validateUpdate: (o) => validatePriorityLevel(o),
      columns: [
        column('Type', 'string', (o) => getString(o, 'spec', 'type') ?? ''),
        column('NominalConcurrencyShares', 'string', (o) => {
          const v = get(o, 'spec', 'limited', 'nominalConcurrencyShares');
          return getObject(o, 'spec', 'limited') && typeof v === 'number' ? v : '<none>';
        }),
        column('Queues', 'string', (o) => queued(o, 'queues')),
        column('HandSize', 'string', (o) => queued(o, 'handSize')),
        column('QueueLengthLimit', 'string', (o) => queued(o, 'queueLengthLimit')),
      ],
    },
  };
}

export const flowControlFactories = [flowSchemaDefinition, priorityLevelDefinition];
