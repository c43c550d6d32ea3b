// kube 1.32's defaults and validation of FlowSchema and
// PriorityLevelConfiguration (pkg/apis/flowcontrol/v1 defaults,
// pkg/apis/flowcontrol/validation), with kube's field paths and messages,
// and the fixed specs of the mandatory `exempt` and `catch-all` objects.

import { deepEqual } from '../../machinery/meta.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../machinery/schema/object-meta.js';
import type { ApiObject, FieldError, JSONValue } from '../types.js';
import { get, getArray, getObject, getString } from './columns.js';
import { duplicate, forbidden, invalid, notSupported, required } from './field-errors.js';

type Obj = Record<string, JSONValue>;

const MAX_MATCHING_PRECEDENCE = 10_000;
const DEFAULT_MATCHING_PRECEDENCE = 1000;
const NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";
// shufflesharding.MaxHashBits: a hand of handSize queues out of `queues` must fit in 60 bits of entropy
const MAX_HASH_BITS = 60;

const everything = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };
const group = (name: string) => ({ kind: 'Group', group: { name } });

/** kube's MandatoryFlowSchemas (apiserver/pkg/apis/flowcontrol/bootstrap), defaulted */
export const MANDATORY_FLOW_SCHEMAS: Record<string, Obj> = {
  exempt: {
    priorityLevelConfiguration: { name: 'exempt' }, matchingPrecedence: 1,
    rules: [{ subjects: [group('system:masters')], resourceRules: [everything], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
  },
  'catch-all': {
    priorityLevelConfiguration: { name: 'catch-all' }, matchingPrecedence: MAX_MATCHING_PRECEDENCE, distinguisherMethod: { type: 'ByUser' },
    rules: [{
      subjects: [group('system:unauthenticated'), group('system:authenticated')],
      resourceRules: [everything], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    }],
  },
};

/** kube's MandatoryPriorityLevelConfigurations, defaulted */
export const MANDATORY_PRIORITY_LEVELS: Record<string, Obj> = {
  exempt: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  'catch-all': { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } },
};

export function defaultFlowSchema(o: ApiObject): void {
  const spec = getObject(o, 'spec');
  // an int32 without omitempty-pointer in Go: 0 and absent are the same, both default
  if (spec && !spec.matchingPrecedence) spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
}

export function defaultPriorityLevel(o: ApiObject): void {
  const limited = getObject(o, 'spec', 'limited');
  if (limited) {
    // spec 000: 30 only when unspecified; an explicit 0 (a "jail" level) stays 0
    if (limited.nominalConcurrencyShares === undefined || limited.nominalConcurrencyShares === null) limited.nominalConcurrencyShares = 30;
    limited.lendablePercent ??= 0;
    const q = getObject(limited, 'limitResponse', 'queuing');
    if (q) {
      if (!q.handSize) q.handSize = 8;
      if (!q.queues) q.queues = 64;
      if (!q.queueLengthLimit) q.queueLengthLimit = 50;
    }
  }
  const exempt = getObject(o, 'spec', 'exempt');
  if (exempt) {
    exempt.nominalConcurrencyShares ??= 0;
    exempt.lendablePercent ??= 0;
  }
}

const hasWildcard = (l: JSONValue[]): boolean => l.includes('*');

function listRule(errs: FieldError[], rule: JSONValue, key: string, at: string, emptyMsg: string, what: string): boolean {
  const l = getArray(rule, key);
  if (l.length === 0) errs.push(required(`${at}.${key}`, emptyMsg));
  else if (hasWildcard(l)) {
    if (l.length > 1) errs.push(invalid(`${at}.${key}`, l, `if '*' is present, must not specify other ${what}`));
  } else return true;
  return false;
}

/** kube's ValidateNonResourceURLPath */
function nonResourceURL(path: string, at: string): FieldError | undefined {
  if (path === '') return invalid(at, path, 'must not be empty');
  if (path === '/') return undefined;
  if (!path.startsWith('/')) return invalid(at, path, 'must start with slash');
  if (path.includes(' ')) return invalid(at, path, 'must not contain white-space');
  if (path.includes('//')) return invalid(at, path, 'must not contain double slash');
  const stars = path.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !path.endsWith('/*'))) return invalid(at, path, 'wildcard can only do suffix glob matching');
  return undefined;
}

function subject(s: JSONValue, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const kind = getString(s, 'kind') ?? '';
  const forbid = (f: string, k: string) => {
    if (get(s, f) != null) errs.push(forbidden(`${at}.${f}`, `${f} is forbidden when subject kind is not '${k}'`));
  };
  const named = (f: 'user' | 'group', k: string) => {
    const v = getObject(s, f);
    if (!v) errs.push(required(`${at}.${f}`, `${f} is required when subject kind is '${k}'`));
    else if (!getString(v, 'name')) errs.push(required(`${at}.${f}.name`));
  };
  switch (kind) {
    case 'ServiceAccount': {
      const sa = getObject(s, 'serviceAccount');
      if (!sa) errs.push(required(`${at}.serviceAccount`, "serviceAccount is required when subject kind is 'ServiceAccount'"));
      else {
        const name = getString(sa, 'name') ?? '';
        if (name === '') errs.push(required(`${at}.serviceAccount.name`));
        else if (name !== '*') for (const m of isDNS1123Subdomain(name)) errs.push(invalid(`${at}.serviceAccount.name`, name, m));
        const ns = getString(sa, 'namespace') ?? '';
        if (ns === '') errs.push(required(`${at}.serviceAccount.namespace`, 'must specify namespace for service account'));
        else for (const m of isDNS1123Label(ns)) errs.push(invalid(`${at}.serviceAccount.namespace`, ns, m));
      }
      forbid('user', 'User');
      forbid('group', 'Group');
      break;
    }
    case 'User':
      named('user', 'User');
      forbid('serviceAccount', 'ServiceAccount');
      forbid('group', 'Group');
      break;
    case 'Group':
      named('group', 'Group');
      forbid('serviceAccount', 'ServiceAccount');
      forbid('user', 'User');
      break;
    default:
      errs.push(notSupported(`${at}.kind`, kind, ['Group', 'ServiceAccount', 'User']));
  }
  return errs;
}

function policyRule(rule: JSONValue, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const subjects = getArray(rule, 'subjects');
  if (subjects.length === 0) errs.push(required(`${at}.subjects`, 'subjects must contain at least one value'));
  subjects.forEach((s, i) => errs.push(...subject(s, `${at}.subjects[${i}]`)));
  const rr = getArray(rule, 'resourceRules');
  const nr = getArray(rule, 'nonResourceRules');
  if (rr.length === 0 && nr.length === 0) errs.push(required(at, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  rr.forEach((r, i) => {
    const p = `${at}.resourceRules[${i}]`;
    listRule(errs, r, 'verbs', p, 'verbs must contain at least one value', 'verbs');
    listRule(errs, r, 'apiGroups', p, 'resource rules must supply at least one api group', 'api groups');
    listRule(errs, r, 'resources', p, 'resource rules must supply at least one resource', 'resources');
    const ns = getArray(r, 'namespaces');
    if (ns.length === 0 && get(r, 'clusterScope') !== true) {
      errs.push(required(`${p}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
    } else if (hasWildcard(ns)) {
      if (ns.length > 1) errs.push(invalid(`${p}.namespaces`, ns, "if '*' is present, must not specify other namespaces"));
    } else {
      ns.forEach((n, j) => {
        for (const m of isDNS1123Label(String(n))) errs.push(invalid(`${p}.namespaces[${j}]`, n, NS_INTRO + m));
      });
    }
  });
  nr.forEach((r, i) => {
    const p = `${at}.nonResourceRules[${i}]`;
    listRule(errs, r, 'verbs', p, 'verbs must contain at least one value', 'verbs');
    if (listRule(errs, r, 'nonResourceURLs', p, 'nonResourceURLs must contain at least one value', 'non-resource URLs')) {
      getArray(r, 'nonResourceURLs').forEach((u, j) => {
        const e = nonResourceURL(String(u), `${p}.nonResourceURLs[${j}]`);
        if (e) errs.push(e);
      });
    }
  });
  return errs;
}

/** kube's status validation of both kinds: each condition names a type, once */
function conditions(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  getArray(o, 'status', 'conditions').forEach((c, i) => {
    const type = getString(c, 'type') ?? '';
    if (type === '') errs.push(required(`status.conditions[${i}].type`, 'must not be empty'));
    else if (seen.has(type)) errs.push(duplicate(`status.conditions[${i}].type`, type));
    seen.add(type);
  });
  return errs;
}

export function validateFlowSchema(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = o.metadata?.name ?? '';
  const spec = getObject(o, 'spec') ?? {};
  const mp = typeof spec.matchingPrecedence === 'number' ? spec.matchingPrecedence : 0;
  if (mp <= 0) errs.push(invalid('spec.matchingPrecedence', mp, 'must be a positive value'));
  if (mp > MAX_MATCHING_PRECEDENCE) errs.push(invalid('spec.matchingPrecedence', mp, `must not be greater than ${MAX_MATCHING_PRECEDENCE}`));
  if (mp === 1 && name !== 'exempt') errs.push(invalid('spec.matchingPrecedence', mp, "only the schema named 'exempt' may have matching precedence 1"));
  const dm = getObject(spec, 'distinguisherMethod');
  if (dm && !['ByNamespace', 'ByUser'].includes(getString(dm, 'type') ?? '')) errs.push(notSupported('spec.distinguisherMethod.type', dm, ['ByNamespace', 'ByUser']));
  const pl = getString(spec, 'priorityLevelConfiguration', 'name') ?? '';
  if (pl === '') errs.push(required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  else for (const m of isDNS1123Subdomain(pl)) errs.push(invalid('spec.priorityLevelConfiguration.name', pl, m));
  getArray(spec, 'rules').forEach((r, i) => errs.push(...policyRule(r, `spec.rules[${i}]`)));
  const mand = MANDATORY_FLOW_SCHEMAS[name];
  if (mand && !deepEqual(spec, mand)) errs.push(invalid('spec', spec, `spec of '${name}' must equal the fixed value`));
  return [...errs, ...conditions(o)];
}

function queuing(q: Obj, at: string): FieldError[] {
  const errs: FieldError[] = [];
  const n = (k: string): number => (typeof q[k] === 'number' ? q[k] : 0);
  if (n('queueLengthLimit') <= 0) errs.push(invalid(`${at}.queueLengthLimit`, n('queueLengthLimit'), 'must be positive'));
  const queues = n('queues');
  const hand = n('handSize');
  if (queues <= 0) errs.push(invalid(`${at}.queues`, queues, 'must be positive'));
  else {
    // shufflesharding.NewDealer's checks, reported on handSize as kube does
    let why = '';
    if (hand <= 0) why = `deckSize ${queues} or handSize ${hand} is not positive`;
    else if (hand > queues) why = `handSize ${hand} is greater than deckSize ${queues}`;
    else if (queues > 2 ** 26) why = `deckSize ${queues} is impractically large`;
    else if (Math.ceil(Math.log2(queues) * hand) > MAX_HASH_BITS) why = `required entropy bits of deckSize ${queues} and handSize ${hand} is greater than ${MAX_HASH_BITS}`;
    if (why) errs.push(invalid(`${at}.handSize`, hand, why));
  }
  return errs;
}

function percent(errs: FieldError[], v: JSONValue | undefined, at: string): void {
  if (typeof v === 'number' && (v < 0 || v > 100)) errs.push(invalid(at, v, 'must be between 0 and 100, inclusive'));
}

export function validatePriorityLevel(o: ApiObject): FieldError[] {
  const errs: FieldError[] = [];
  const name = o.metadata?.name ?? '';
  const spec = getObject(o, 'spec') ?? {};
  const type = getString(spec, 'type') ?? '';
  if ((name === 'exempt') !== (type === 'Exempt')) errs.push(invalid('spec.type', type, "type must be 'Exempt' if and only if name is 'exempt'"));
  const limited = getObject(spec, 'limited');
  const exempt = getObject(spec, 'exempt');
  if (type === 'Exempt') {
    if (limited) errs.push(forbidden('spec.limited', 'must be nil if the type is not Limited'));
    if (exempt) {
      const ncs = exempt.nominalConcurrencyShares;
      if (typeof ncs === 'number' && ncs < 0) errs.push(invalid('spec.exempt.nominalConcurrencyShares', ncs, 'must be a non-negative integer'));
      percent(errs, exempt.lendablePercent, 'spec.exempt.lendablePercent');
    }
  } else if (type === 'Limited') {
    if (exempt) errs.push(forbidden('spec.exempt', 'must be nil if the type is Limited'));
    if (!limited) errs.push(required('spec.limited', 'must not be empty when type is Limited'));
    else errs.push(...validateLimited(limited));
  } else {
    errs.push(notSupported('spec.type', type, ['Exempt', 'Limited']));
  }
  const mand = MANDATORY_PRIORITY_LEVELS[name];
  if (mand) {
    // the admin may tune `exempt`'s spec.exempt, nothing else of either mandatory level
    if (name === 'exempt' ? type !== mand.type || limited !== undefined : !deepEqual(spec, mand)) {
      errs.push(invalid('spec', spec, name === 'exempt' ? "spec of 'exempt' except the 'spec.exempt' field must equal the fixed value" : `spec of '${name}' must equal the fixed value`));
    }
  }
  return [...errs, ...conditions(o)];
}

function validateLimited(l: Obj): FieldError[] {
  const errs: FieldError[] = [];
  const at = 'spec.limited';
  const ncs = l.nominalConcurrencyShares;
  if (typeof ncs === 'number' && ncs < 0) errs.push(invalid(`${at}.nominalConcurrencyShares`, ncs, 'must be a non-negative integer'));
  const lr = getObject(l, 'limitResponse') ?? {};
  const lrType = getString(lr, 'type') ?? '';
  const q = getObject(lr, 'queuing');
  if (lrType === 'Reject') {
    if (q) errs.push(forbidden(`${at}.limitResponse.queuing`, 'must be nil if limited.limitResponse.type is not Limited'));
  } else if (lrType === 'Queue') {
    if (!q) errs.push(required(`${at}.limitResponse.queuing`, 'must not be empty if limited.limitResponse.type is Limited'));
    else errs.push(...queuing(q, `${at}.limitResponse.queuing`));
  } else {
    errs.push(notSupported(`${at}.limitResponse.type`, lrType, ['Queue', 'Reject']));
  }
  percent(errs, l.lendablePercent, `${at}.lendablePercent`);
  const blp = l.borrowingLimitPercent;
  if (typeof blp === 'number' && blp < 0) errs.push(invalid(`${at}.borrowingLimitPercent`, blp, 'if specified, must be a non-negative integer'));
  return errs;
}
