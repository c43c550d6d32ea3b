// The access review kinds of `authorization.<domain>` (spec 001 §2.3, §4):
// SubjectAccessReview (any user), LocalSubjectAccessReview (any user, one
// namespace), SelfSubjectAccessReview (the caller) and SelfSubjectRulesReview
// (what the caller may do in a namespace). Each asks the server's authorizer
// (CapabilityContext.authorizer) and answers in `status`; nothing is stored.
// `create` is a capability (src/registry/capabilities.ts): the endpoint layer
// decodes the body and hands over the review object.
// `kubectl auth can-i` (and `--list`) use the Self* kinds.

import { badRequest, invalid } from '../../core/errors.js';
import { atomicList, bool, mapOf, obj, proto, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from '../../registry/kinds/meta.js';
import { isQualifiedName, isValidLabelValue } from '../../machinery/schema/object-meta.js';
import type { CapabilityContext, CapabilityResult, Creater } from '../../registry/capabilities.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { FieldError, ResourceDefinition } from '../../registry/types.js';
import { AlwaysDenyAuthorizer } from '../authz/chain.js';
import { aggregateErrors } from '../authz/errors.js';
import type { Authorizer, RequestAttributes } from '../authz/types.js';
import type { UserInfo } from '../types.js';

export function authorizationGroup(apiDomain: string): string {
  return `authorization.${apiDomain}`;
}

const strList = (d: string): Schema => atomicList(d, { type: 'string' });

// --- schemas; protobuf numbers are those of Kubernetes' authorization/v1 (spec 000 §2.7)

function selectorRequirementSchema(): Schema {
  return obj('A selector requirement: a key, an operator and values.', proto({ key: 1, operator: 2, values: 3 }, {
    key: str('The label or field key the requirement applies to.'),
    operator: str('In, NotIn, Exists, DoesNotExist (labels) or In, NotIn, Exists, DoesNotExist (fields).'),
    values: strList('The values of the requirement.'),
  }));
}

function selectorAttributesSchema(what: string): Schema {
  return obj(`The ${what} selector of a list or watch request.`, proto({ rawSelector: 1, requirements: 2 }, {
    rawSelector: str(`The serialized ${what} selector, as in a query parameter.`),
    requirements: atomicList(`The parsed ${what} selector requirements.`, selectorRequirementSchema()),
  }));
}

function resourceAttributesSchema(): Schema {
  return obj(
    'The authorization attributes of a resource request.',
    proto({ namespace: 1, verb: 2, group: 3, version: 4, resource: 5, subresource: 6, name: 7, fieldSelector: 8, labelSelector: 9 }, {
      namespace: str('The namespace of the action; "" means all namespaces for namespaced resources.'),
      verb: str('An API verb: get, list, watch, create, update, patch, delete, deletecollection, …; "*" means all.'),
      group: str('The API group of the resource; "*" means all.'),
      version: str('The API version of the resource; "*" means all.'),
      resource: str('The resource (plural name); "*" means all.'),
      subresource: str('The subresource; "" means none.'),
      name: str('The name of the object; "" means all.'),
      fieldSelector: selectorAttributesSchema('field'),
      labelSelector: selectorAttributesSchema('label'),
    }),
  );
}

function nonResourceAttributesSchema(): Schema {
  return obj('The authorization attributes of a non-resource request.', proto({ path: 1, verb: 2 }, {
    path: str('The URL path of the request.'),
    verb: str('The HTTP verb in lower case (get, post, …).'),
  }));
}

const accessAttributes = {
  resourceAttributes: resourceAttributesSchema(),
  nonResourceAttributes: nonResourceAttributesSchema(),
};

function subjectAccessReviewSpecSchema(): Schema {
  return obj(
    'The access request; exactly one of resourceAttributes and nonResourceAttributes is set.',
    proto({ resourceAttributes: 1, nonResourceAttributes: 2, user: 3, groups: 4, extra: 5, uid: 6 }, {
      ...accessAttributes,
      user: str('The user to test for.'),
      groups: strList('The groups to test for.'),
      extra: mapOf('Extra attributes of the user, as an authenticator would set them.', { type: 'array', items: { type: 'string' } }),
      uid: str('The UID of the user to test for.'),
    }),
  );
}

function selfSubjectAccessReviewSpecSchema(): Schema {
  return obj(
    'The access request of the caller; exactly one of resourceAttributes and nonResourceAttributes is set.',
    proto({ resourceAttributes: 1, nonResourceAttributes: 2 }, accessAttributes),
  );
}

function accessReviewStatusSchema(): Schema {
  return obj('Filled in by the server: whether the request would be allowed.', proto({ allowed: 1, reason: 2, evaluationError: 3, denied: 4 }, {
    allowed: bool('True if the action would be allowed.'),
    denied: bool('True if an authorizer denied the action; neither allowed nor denied means no opinion.'),
    reason: str('Why the action was allowed or denied.'),
    evaluationError: str('An error that occurred during the authorization check.'),
  }), ['allowed']);
}

function rulesReviewStatusSchema(): Schema {
  return obj(
    'Filled in by the server: the actions the subject may perform (may be incomplete).',
    proto({ resourceRules: 1, nonResourceRules: 2, incomplete: 3, evaluationError: 4 }, {
      resourceRules: atomicList('Actions allowed on resources.', obj('Actions allowed on resources.', proto({ verbs: 1, apiGroups: 2, resources: 3, resourceNames: 4 }, {
        verbs: strList('API verbs; "*" means all.'),
        apiGroups: strList('API groups; "*" means all.'),
        resources: strList('Resources; "*" means all.'),
        resourceNames: strList('Object names; empty means all.'),
      }))),
      nonResourceRules: atomicList('Actions allowed on non-resource URLs.', obj('Actions allowed on non-resource URLs.', proto({ verbs: 1, nonResourceURLs: 2 }, {
        verbs: strList('HTTP verbs in lower case; "*" means all.'),
        nonResourceURLs: strList('URL paths; a trailing "*" matches a prefix; "*" means all.'),
      }))),
      incomplete: bool('True when the authorizer cannot enumerate every rule.'),
      evaluationError: str('An error that occurred while evaluating the rules.'),
    }),
    ['resourceRules', 'nonResourceRules', 'incomplete'],
  );
}

// --- decoding and validation (Kubernetes' ValidateSubjectAccessReviewSpec)

interface AccessSpec {
  resourceAttributes?: Record<string, unknown>;
  nonResourceAttributes?: Record<string, unknown>;
  user?: unknown;
  groups?: unknown;
  extra?: unknown;
  uid?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function specOf(kind: string, group: string, review: Record<string, unknown>): AccessSpec {
  if (!isObject(review.spec)) {
    throw invalid(kind, group, '', [{ field: 'spec', type: 'FieldValueRequired', message: 'Required value' }]);
  }
  return review.spec as AccessSpec;
}

function attributeErrors(spec: AccessSpec): FieldError[] {
  const hasR = isObject(spec.resourceAttributes);
  const hasN = isObject(spec.nonResourceAttributes);
  if (!hasR && !hasN) {
    return [{ field: 'spec.resourceAttributes', type: 'FieldValueRequired', message: 'Required value: exactly one of nonResourceAttributes or resourceAttributes must be specified' }];
  }
  if (hasR && hasN) {
    return [{ field: 'spec.nonResourceAttributes', type: 'FieldValueInvalid', message: 'Invalid value: "": cannot be specified in combination with resourceAttributes' }];
  }
  return hasR ? selectorErrors(spec.resourceAttributes!) : [];
}

/**
 * kube's validateFieldSelectorAttributes / validateLabelSelectorAttributes: a raw selector or
 * requirements, not both; each requirement with a key (a field selector's named, a label
 * selector's a label name), values as its operator wants; an unknown (or empty) operator is
 * allowed for newer clients and echoed as "" (the operator has no omitempty)
 */
function selectorErrors(r: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  for (const what of ['fieldSelector', 'labelSelector'] as const) {
    const sel = r[what];
    if (!isObject(sel)) continue;
    const at = `spec.resourceAttributes.${what}`;
    const raw = text(sel.rawSelector);
    const reqs = Array.isArray(sel.requirements) ? sel.requirements : [];
    if (raw !== '' && reqs.length > 0) errs.push({ field: `${at}.rawSelector`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(raw)}: may not specified at the same time as requirements` });
    if (raw === '' && reqs.length === 0) errs.push({ field: `${at}.requirements`, type: 'FieldValueRequired', message: `Required value: when ${at} is specified, requirements or rawSelector is required` });
    reqs.forEach((q, i) => {
      if (!isObject(q)) return;
      const p = `${at}.requirements[${i}]`;
      q.operator ??= '';
      const key = text(q.key);
      if (what === 'fieldSelector' && key === '') errs.push({ field: `${p}.key`, type: 'FieldValueRequired', message: 'Required value: must be specified' });
      const n = stringList(q.values).length;
      if ((q.operator === 'In' || q.operator === 'NotIn') && n === 0) errs.push({ field: `${p}.values`, type: 'FieldValueRequired', message: "Required value: must be specified when `operator` is 'In' or 'NotIn'" });
      if ((q.operator === 'Exists' || q.operator === 'DoesNotExist') && n > 0) errs.push({ field: `${p}.values`, type: 'FieldValueForbidden', message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'" });
      if (what === 'labelSelector') {
        for (const m of isQualifiedName(key)) errs.push({ field: `${p}.key`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(key)}: ${m}` });
        stringList(q.values).forEach((v, j) => {
          for (const m of isValidLabelValue(v)) errs.push({ field: `${p}.values[${j}]`, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(v)}: ${m}` });
        });
      }
    });
  }
  return errs;
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function extraOf(v: unknown): Record<string, string[]> | undefined {
  if (!isObject(v)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, vals] of Object.entries(v)) out[k] = stringList(vals);
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Kubernetes' ResourceAttributesFrom / NonResourceAttributesFrom (spec 001 §6) */
export function attributesFromSpec(user: UserInfo, spec: AccessSpec): RequestAttributes {
  if (isObject(spec.resourceAttributes)) {
    const r = spec.resourceAttributes;
    return {
      user,
      verb: text(r.verb),
      isResourceRequest: true,
      path: '',
      apiGroup: text(r.group),
      apiVersion: text(r.version),
      namespace: text(r.namespace),
      resource: text(r.resource),
      subresource: text(r.subresource),
      name: text(r.name),
    };
  }
  const n = spec.nonResourceAttributes ?? {};
  return { user, verb: text(n.verb), isResourceRequest: false, path: text(n.path), apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

/** the wire form of the spec echoed back: only the fields that were set */
function specJson(spec: AccessSpec, withSubject: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (isObject(spec.resourceAttributes)) out.resourceAttributes = spec.resourceAttributes;
  if (isObject(spec.nonResourceAttributes)) out.nonResourceAttributes = spec.nonResourceAttributes;
  if (withSubject) {
    if (text(spec.user) !== '') out.user = spec.user;
    if (stringList(spec.groups).length > 0) out.groups = stringList(spec.groups);
    const extra = extraOf(spec.extra);
    if (extra) out.extra = extra;
    if (text(spec.uid) !== '') out.uid = spec.uid;
  }
  return out;
}

/**
 * asks the authorizer; an authorizer error is reported, not thrown: kube's
 * SubjectAccessReview REST puts the aggregated error in status.evaluationError
 * beside the decision and reason (spec 001 §5.12)
 */
async function decide(authorizer: Authorizer, attrs: RequestAttributes): Promise<Record<string, unknown>> {
  try {
    const d = await authorizer.authorize(attrs);
    const error = aggregateErrors(d.errors);
    const more = { ...(d.reason ? { reason: d.reason } : {}), ...(error !== undefined ? { evaluationError: error } : {}) };
    if (d.decision === 'allow') return { allowed: true, ...more };
    if (d.decision === 'deny') return { allowed: false, denied: true, ...more };
    return { allowed: false, ...more };
  } catch (e) {
    return { allowed: false, evaluationError: (e as Error)?.message ?? String(e) };
  }
}

// the server always sets the chain; without one, reviews deny (secure by default)
const authorizerOf = (ctx: CapabilityContext): Authorizer => ctx.authorizer ?? new AlwaysDenyAuthorizer();

function answer(kind: string, apiVersion: string, namespace: string | undefined, spec: Record<string, unknown>, status: Record<string, unknown>): CapabilityResult {
  return {
    status: 201,
    object: {
      apiVersion,
      kind,
      metadata: { ...(namespace ? { namespace } : {}), creationTimestamp: null },
      spec,
      status,
    },
  };
}

// --- the kinds

interface KindNames {
  kind: string;
  resource: string;
  description: string;
  scope: 'Cluster' | 'Namespaced';
  spec: Schema;
  status: Schema;
}

function definition(n: SchemaNames, k: KindNames, create: Creater['create']): ResourceDefinition {
  return {
    group: authorizationGroup(n.apiDomain),
    version: 'v1',
    kind: k.kind,
    resource: k.resource,
    singular: k.resource.replace(/s$/, ''),
    scope: k.scope,
    verbs: ['create'],
    schema: kindSchema(n, k.description, proto({ spec: 2, status: 3 }, { spec: k.spec, status: k.status }), ['spec']),
    strategy: {},
    capabilities: { '': { create } },
  };
}

export function accessReviewDefinitions(n: SchemaNames): ResourceDefinition[] {
  const group = authorizationGroup(n.apiDomain);
  const apiVersion = `${group}/v1`;

  const subjectAccessReview = definition(
    n,
    {
      kind: 'SubjectAccessReview',
      resource: 'subjectaccessreviews',
      description: 'SubjectAccessReview checks whether a user or group can perform an action.',
      scope: 'Cluster',
      spec: subjectAccessReviewSpecSchema(),
      status: accessReviewStatusSchema(),
    },
    async (ctx, review) => {
      const spec = specOf('SubjectAccessReview', group, review);
      const errors = attributeErrors(spec);
      if (text(spec.user) === '' && stringList(spec.groups).length === 0) {
        errors.push({ field: 'spec.user', type: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified' });
      }
      if (errors.length > 0) throw invalid('SubjectAccessReview', group, '', errors);
      const uid = text(spec.uid);
      const extra = extraOf(spec.extra);
      const user: UserInfo = { username: text(spec.user), groups: stringList(spec.groups), ...(uid ? { uid } : {}), ...(extra ? { extra } : {}) };
      const status = await decide(authorizerOf(ctx), attributesFromSpec(user, spec));
      return answer('SubjectAccessReview', apiVersion, undefined, specJson(spec, true), status);
    },
  );

  const localSubjectAccessReview = definition(
    n,
    {
      kind: 'LocalSubjectAccessReview',
      resource: 'localsubjectaccessreviews',
      description: 'LocalSubjectAccessReview checks whether a user or group can perform an action in one namespace.',
      scope: 'Namespaced',
      spec: subjectAccessReviewSpecSchema(),
      status: accessReviewStatusSchema(),
    },
    async (ctx, review) => {
      const namespace = ctx.namespace;
      const meta = (review.metadata ?? {}) as { namespace?: unknown };
      if (text(meta.namespace) !== '' && meta.namespace !== namespace) {
        throw badRequest(`the namespace of the provided object does not match the namespace sent on the request`);
      }
      const spec = specOf('LocalSubjectAccessReview', group, review);
      const errors = attributeErrors(spec);
      // a namespaced review is about resources only (Kubernetes' ValidateLocalSubjectAccessReview)
      if (errors.length === 0 && isObject(spec.nonResourceAttributes)) {
        errors.push({ field: 'spec.nonResourceAttributes', type: 'FieldValueInvalid', message: 'Invalid value: "": disallowed on this kind of request' });
      }
      if (text(spec.user) === '' && stringList(spec.groups).length === 0) {
        errors.push({ field: 'spec.user', type: 'FieldValueInvalid', message: 'Invalid value: "": at least one of user or group must be specified' });
      }
      if (errors.length > 0) throw invalid('LocalSubjectAccessReview', group, '', errors);
      const attrsNs = text(spec.resourceAttributes?.namespace);
      if (attrsNs !== '' && attrsNs !== namespace) {
        throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
      }
      // an empty namespace is defaulted to the request's
      const resolved: AccessSpec = { ...spec, resourceAttributes: { ...spec.resourceAttributes, namespace } };
      const uid = text(spec.uid);
      const extra = extraOf(spec.extra);
      const user: UserInfo = { username: text(spec.user), groups: stringList(spec.groups), ...(uid ? { uid } : {}), ...(extra ? { extra } : {}) };
      const status = await decide(authorizerOf(ctx), attributesFromSpec(user, resolved));
      return answer('LocalSubjectAccessReview', apiVersion, namespace, specJson(resolved, true), status);
    },
  );

  const selfSubjectAccessReview = definition(
    n,
    {
      kind: 'SelfSubjectAccessReview',
      resource: 'selfsubjectaccessreviews',
      description: 'SelfSubjectAccessReview checks whether the caller can perform an action; an empty spec.resourceAttributes.namespace means all namespaces.',
      scope: 'Cluster',
      spec: selfSubjectAccessReviewSpecSchema(),
      status: accessReviewStatusSchema(),
    },
    async (ctx, review) => {
      const spec = specOf('SelfSubjectAccessReview', group, review);
      const errors = attributeErrors(spec);
      if (errors.length > 0) throw invalid('SelfSubjectAccessReview', group, '', errors);
      const status = await decide(authorizerOf(ctx), attributesFromSpec(ctx.user, spec));
      return answer('SelfSubjectAccessReview', apiVersion, undefined, specJson(spec, false), status);
    },
  );

  const selfSubjectRulesReview = definition(
    n,
    {
      kind: 'SelfSubjectRulesReview',
      resource: 'selfsubjectrulesreviews',
      description: 'SelfSubjectRulesReview enumerates the actions the caller can perform in a namespace; the list may be incomplete.',
      scope: 'Cluster',
      spec: obj('The namespace to evaluate rules for.', proto({ namespace: 1 }, { namespace: str('The namespace to evaluate rules for.') })),
      status: rulesReviewStatusSchema(),
    },
    async (ctx, review) => {
      if (!isObject(review.spec)) {
        throw invalid('SelfSubjectRulesReview', group, '', [{ field: 'spec', type: 'FieldValueRequired', message: 'Required value' }]);
      }
      const namespace = text(review.spec.namespace);
      const authorizer = authorizerOf(ctx);
      let status: Record<string, unknown>;
      if (!authorizer.rulesFor) {
        // spec 001 §4: rules are additive; an authorizer that cannot list them says so
        status = { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'the authorizer does not support rule evaluation' };
      } else {
        try {
          const r = await authorizer.rulesFor(ctx.user, namespace);
          status = {
            resourceRules: r.resourceRules.map((x) => ({ verbs: [...x.verbs], ...(x.apiGroups ? { apiGroups: [...x.apiGroups] } : {}), ...(x.resources ? { resources: [...x.resources] } : {}), ...(x.resourceNames?.length ? { resourceNames: [...x.resourceNames] } : {}) })),
            nonResourceRules: r.nonResourceRules.map((x) => ({ verbs: [...x.verbs], ...(x.nonResourceURLs ? { nonResourceURLs: [...x.nonResourceURLs] } : {}) })),
            incomplete: r.incomplete,
            ...(r.errors?.length ? { evaluationError: aggregateErrors(r.errors) } : {}),
          };
        } catch (e) {
          status = { resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: (e as Error)?.message ?? String(e) };
        }
      }
      return answer('SelfSubjectRulesReview', apiVersion, undefined, namespace ? { namespace } : {}, status);
    },
  );

  return [subjectAccessReview, localSubjectAccessReview, selfSubjectAccessReview, selfSubjectRulesReview];
}
