// The admissionregistration.<domain>/v1 kinds, served as ordinary kinds
// (schema + strategy): MutatingWebhookConfiguration,
// ValidatingWebhookConfiguration, ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding. Their strategies default and validate
// (webhook-config.ts, policy-config.ts); the admission chain reads the
// stored objects through the applied feed (source.ts).

import { column, get, getArray } from '../kinds/columns.js';
import { atomicList, enumOf, int32, listMap, obj, opaque, ref, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from '../kinds/meta.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ResourceDefinition } from '../types.js';
import { compileBinding, defaultBinding, defaultPolicy, validateBinding, validatePolicy } from './policy-config.js';
import { defaultWebhookConfiguration, validateWebhookConfiguration } from './webhook-config.js';

export const admissionGroup = (apiDomain: string): string => `admissionregistration.${apiDomain}`;

const strings = (d: string): Schema => atomicList(d, { type: 'string' });

function ruleSchema(named: boolean): Schema {
  return obj('Operations and resources a webhook or policy cares about; a request matching any rule is in scope.', {
    operations: strings('Operations the rule covers: CREATE, UPDATE, DELETE, CONNECT or * for all.'),
    apiGroups: strings('API groups the resources belong to; "*" is all groups, "" the core group.'),
    apiVersions: strings('API versions the resources belong to; "*" is all versions.'),
    resources: strings('Resources the rule applies to: "pods", "pods/status", "*" (every resource), "*/*" (with sub-resources), "pods/*", "*/status".'),
    scope: enumOf('Which resource scopes match: Cluster, Namespaced or * (default).', ['*', 'Cluster', 'Namespaced']),
    ...(named ? { resourceNames: strings('Names of the objects the rule covers; empty is all.') } : {}),
  });
}

function matchConditionsSchema(): Schema {
  return listMap('CEL conditions that must all be true for the request to be sent; at most 64.', obj('One named CEL condition.', {
    name: str('Identifier of the condition, a qualified name.'),
    expression: str('CEL expression over object, oldObject and request that evaluates to a bool.'),
  }, ['name', 'expression']), ['name'], 'name');
}

function webhookSchema(n: SchemaNames, mutating: boolean): Schema {
  return obj(`An admission webhook and the resources and operations it applies to (${mutating ? 'mutating' : 'validating'}).`, {
    name: str('Name of the webhook, a fully qualified name such as imagepolicy.example.com.'),
    clientConfig: obj('How to reach the webhook: a URL or a Service, and the CA bundle of its serving certificate.', {
      url: str('https URL of the webhook; no user info, query or fragment.'),
      service: obj('A Service in front of the webhook.', {
        namespace: str('Namespace of the Service.'),
        name: str('Name of the Service.'),
        path: str('URL path sent in requests.'),
        port: int32('Port of the Service; defaults to 443.'),
      }, ['namespace', 'name']),
      caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle (base64) that validates the webhook\'s serving certificate.' },
    }),
    rules: atomicList('Operations and resources the webhook cares about.', ruleSchema(false)),
    failurePolicy: enumOf('What happens when the webhook cannot be called or answers badly: Fail (default) or Ignore.', ['Fail', 'Ignore']),
    matchPolicy: enumOf('Whether requests through other versions of a matched resource are sent too: Equivalent (default) or Exact.', ['Equivalent', 'Exact']),
    namespaceSelector: ref(n.meta('LabelSelector'), 'Only objects in namespaces whose labels match are sent.'),
    objectSelector: ref(n.meta('LabelSelector'), 'Only objects whose labels (new or old) match are sent.'),
    sideEffects: enumOf('Whether calling the webhook has side effects: None or NoneOnDryRun (Unknown and Some only from older versions).', ['None', 'NoneOnDryRun', 'Some', 'Unknown']),
    timeoutSeconds: int32('Seconds to wait for the webhook (1 to 30, default 10); the failure policy applies after that.'),
    admissionReviewVersions: strings('AdmissionReview versions the webhook accepts, preferred first; must include v1.'),
    ...(mutating ? { reinvocationPolicy: enumOf('Whether the webhook is called again when later admission changed the object: Never (default) or IfNeeded.', ['IfNeeded', 'Never']) } : {}),
    matchConditions: matchConditionsSchema(),
  }, ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions']);
}

function webhookConfiguration(n: SchemaNames, mutating: boolean): ResourceDefinition {
  const kind = mutating ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  return {
    group: admissionGroup(n.apiDomain),
    version: 'v1',
    kind,
    resource: mutating ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations',
    singular: mutating ? 'mutatingwebhookconfiguration' : 'validatingwebhookconfiguration',
    scope: 'Cluster',
    categories: ['api-extensions'],
    schema: kindSchema(n, `${kind} describes the configuration of ${mutating ? 'a mutating' : 'a validating'} admission webhook.`, {
      webhooks: listMap('The webhooks, each with its resources and operations.', webhookSchema(n, mutating), ['name'], 'name'),
    }),
    strategy: {
      default: (o) => defaultWebhookConfiguration(o, mutating),
      validate: (o) => validateWebhookConfiguration(o, mutating),
      validateUpdate: (o, old) => validateWebhookConfiguration(o, mutating, old),
      tracksGeneration: true,
      columns: [column('Webhooks', 'integer', (o) => (Array.isArray(o.webhooks) ? o.webhooks.length : 0), { description: 'Number of webhooks' })],
    },
  };
}

function matchResourcesSchema(n: SchemaNames, d: string): Schema {
  return obj(d, {
    namespaceSelector: ref(n.meta('LabelSelector'), 'Only objects in namespaces whose labels match.'),
    objectSelector: ref(n.meta('LabelSelector'), 'Only objects whose labels match.'),
    resourceRules: atomicList('Resources and operations that match.', ruleSchema(true)),
    excludeResourceRules: atomicList('Resources and operations that do not match, even when a resourceRule does.', ruleSchema(true)),
    matchPolicy: enumOf('Exact or Equivalent (default).', ['Equivalent', 'Exact']),
  }, undefined, { 'x-orch-map-type': 'atomic' });
}

function policyDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: admissionGroup(n.apiDomain),
    version: 'v1',
    kind: 'ValidatingAdmissionPolicy',
    resource: 'validatingadmissionpolicies',
    singular: 'validatingadmissionpolicy',
    scope: 'Cluster',
    categories: ['api-extensions'],
    subresources: ['status'],
    schema: kindSchema(n, 'ValidatingAdmissionPolicy describes CEL validations evaluated in the API server, without a webhook.', {
      spec: obj('The policy.', {
        paramKind: obj('Kind of the parameter objects bindings refer to.', { apiVersion: str('group/version of the parameter kind.'), kind: str('Kind of the parameters.') }, undefined, { 'x-orch-map-type': 'atomic' }),
        matchConstraints: matchResourcesSchema(n, 'Resources the policy can validate; required.'),
        validations: atomicList('CEL validations; all must be true.', obj('One validation.', {
          expression: str('CEL over object, oldObject, request, params, namespaceObject and variables; true = valid.'),
          message: str('Message returned when the validation fails.'),
          reason: enumOf('Reason (and HTTP code) of a failure: Unauthorized, Forbidden, Invalid (default), RequestEntityTooLarge.', ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized']),
          messageExpression: str('CEL that builds the failure message (a string).'),
        }, ['expression'])),
        failurePolicy: enumOf('What happens when an expression errors or params are misconfigured: Fail (default) or Ignore.', ['Fail', 'Ignore']),
        auditAnnotations: atomicList('Audit annotations added to the request\'s audit event.', obj('One annotation.', {
          key: str('Key of the annotation (prefixed with the policy name).'),
          valueExpression: str('CEL that evaluates to a string value, or null to skip.'),
        }, ['key', 'valueExpression'])),
        matchConditions: matchConditionsSchema(),
        variables: atomicList('Named CEL values, visible to later variables and validations as variables.<name>.', obj('One variable.', {
          name: str('Name of the variable, a CEL identifier.'),
          expression: str('CEL expression of the variable.'),
        }, ['name', 'expression'])),
      }),
      status: obj('What the server observed of the policy.', {
        observedGeneration: { type: 'integer', format: 'int64', description: 'Generation observed.' },
        typeChecking: opaque('Results of type checking (not produced by this server).'),
        conditions: atomicList('Conditions of the policy.', opaque('A condition.')),
      }),
    }),
    strategy: {
      default: defaultPolicy,
      validate: validatePolicy,
      tracksGeneration: true,
      columns: [column('Validations', 'integer', (o) => getArray(o, 'spec', 'validations').length)],
    },
  };
}

function bindingDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: admissionGroup(n.apiDomain),
    version: 'v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    resource: 'validatingadmissionpolicybindings',
    singular: 'validatingadmissionpolicybinding',
    scope: 'Cluster',
    categories: ['api-extensions'],
    schema: kindSchema(n, 'ValidatingAdmissionPolicyBinding binds a ValidatingAdmissionPolicy to resources and parameters.', {
      spec: obj('The binding.', {
        policyName: str('Name of the ValidatingAdmissionPolicy.'),
        paramRef: obj('Which parameter object(s) the policy is evaluated with.', {
          name: str('Name of the parameter object.'),
          namespace: str('Namespace of the parameter objects; empty = the request\'s namespace for namespaced parameter kinds.'),
          selector: ref(n.meta('LabelSelector'), 'Parameter objects matching these labels; the policy is evaluated with each.'),
          parameterNotFoundAction: enumOf('What happens when no parameter object is found: Allow or Deny.', ['Allow', 'Deny']),
        }, undefined, { 'x-orch-map-type': 'atomic' }),
        matchResources: matchResourcesSchema(n, 'Narrows the resources the policy applies to; absent = all the policy matches.'),
        validationActions: strings('What a failed validation does: Deny, Warn and/or Audit (Deny and Warn not together).'),
      }),
    }),
    strategy: {
      default: defaultBinding,
      validate: validateBinding,
      tracksGeneration: true,
      columns: [
        column('PolicyName', 'string', (o) => compileBinding(o).policyName),
        column('ParamRef', 'string', (o) => String(get(o, 'spec', 'paramRef', 'name') ?? '<unset>')),
      ],
    },
  };
}

/** the four kinds, for the registry (the server adds them to the built-in set) */
export function admissionRegistrationDefinitions(n: SchemaNames): ResourceDefinition[] {
  return [webhookConfiguration(n, true), webhookConfiguration(n, false), policyDefinition(n), bindingDefinition(n)];
}
