// The admissionregistration.<domain>/v1 kinds, served as ordinary kinds
// (schema + strategy): MutatingWebhookConfiguration,
// ValidatingWebhookConfiguration, ValidatingAdmissionPolicy and
// ValidatingAdmissionPolicyBinding. Their strategies default and validate
// (webhook-config.ts, policy-config.ts); the admission chain reads the
// stored objects through the applied feed (source.ts). Protobuf field numbers:
// Kubernetes' admissionregistration/v1 generated.proto (docs/protobuf.md).

import { column, get, getArray } from '../kinds/columns.js';
import { atomicList, enumOf, int32, int64, listMap, obj, proto, protoEmbedded, ref, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from '../kinds/meta.js';
import { conditions } from '../kinds/workload-shared.js';
import { validateMetaConditions } from '../kinds/required-members.js';
import { each } from '../zero-shape.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ResourceDefinition } from '../types.js';
import { compileBinding, defaultBinding, defaultPolicy, validateBinding, validatePolicy } from './policy-config.js';
import { defaultWebhookConfiguration, validateWebhookConfiguration } from './webhook-config.js';

export const admissionGroup = (apiDomain: string): string => `admissionregistration.${apiDomain}`;

const strings = (d: string): Schema => atomicList(d, { type: 'string' });

/**
 * RuleWithOperations { operations = 1; Rule rule = 2 (Go-inlined) { apiGroups = 1;
 * apiVersions = 2; resources = 3; scope = 4 } }; NamedRuleWithOperations inlines
 * all of it once more: { resourceNames = 1; RuleWithOperations = 2 }.
 */
function ruleSchema(named: boolean): Schema {
  const ops = named ? [2] : [];
  const props = {
    ...protoEmbedded([...ops, 2], { apiGroups: 1, apiVersions: 2, resources: 3, scope: 4 }, {
      apiGroups: strings('API groups the resources belong to; "*" is all groups, "" the core group.'),
      apiVersions: strings('API versions the resources belong to; "*" is all versions.'),
      resources: strings('Resources the rule applies to: "pods", "pods/status", "*" (every resource), "*/*" (with sub-resources), "pods/*", "*/status".'),
      scope: enumOf('Which resource scopes match: Cluster, Namespaced or * (default).', ['*', 'Cluster', 'Namespaced']),
    }),
    operations: strings('Operations the rule covers: CREATE, UPDATE, DELETE, CONNECT or * for all.'),
    ...(named ? proto({ resourceNames: 1 }, { resourceNames: strings('Names of the objects the rule covers; empty is all.') }) : {}),
  };
  const withOps = named ? protoEmbedded([2], { operations: 1 }, props) : proto({ operations: 1 }, props);
  // the JSON property order of Kubernetes' types (operations first)
  const { operations, ...rest } = withOps;
  return obj('Operations and resources a webhook or policy cares about; a request matching any rule is in scope.', { operations: operations!, ...rest });
}

function matchConditionsSchema(): Schema {
  return listMap('CEL conditions that must all be true for the request to be sent; at most 64.', obj('One named CEL condition.', proto({ name: 1, expression: 2 }, {
    name: str('Identifier of the condition, a qualified name.'),
    expression: str('CEL expression over object, oldObject and request that evaluates to a bool.'),
  }), ['name', 'expression']), ['name'], 'name');
}

/** WebhookClientConfig { ServiceReference service = 1; bytes caBundle = 2; url = 3 } (admissionregistration and apiextensions alike) */
export function webhookClientConfigSchema(): Schema {
  return obj('How to reach the webhook: a URL or a Service, and the CA bundle of its serving certificate.', proto({ url: 3, service: 1, caBundle: 2 }, {
    url: str('https URL of the webhook; no user info, query or fragment.'),
    service: obj('A Service in front of the webhook.', proto({ namespace: 1, name: 2, path: 3, port: 4 }, {
      namespace: str('Namespace of the Service.'),
      name: str('Name of the Service.'),
      path: str('URL path sent in requests.'),
      port: int32('Port of the Service; defaults to 443.'),
    }), ['namespace', 'name']),
    caBundle: { type: 'string', format: 'byte', description: 'PEM CA bundle (base64) that validates the webhook\'s serving certificate.' },
  }));
}

/** MutatingWebhook and ValidatingWebhook share numbers 1-9; objectSelector and matchConditions differ */
function webhookSchema(n: SchemaNames, mutating: boolean): Schema {
  const numbers: Record<string, number> = mutating
    ? { name: 1, clientConfig: 2, rules: 3, failurePolicy: 4, matchPolicy: 9, namespaceSelector: 5, objectSelector: 11, sideEffects: 6, timeoutSeconds: 7, admissionReviewVersions: 8, reinvocationPolicy: 10, matchConditions: 12 }
    : { name: 1, clientConfig: 2, rules: 3, failurePolicy: 4, matchPolicy: 9, namespaceSelector: 5, objectSelector: 10, sideEffects: 6, timeoutSeconds: 7, admissionReviewVersions: 8, matchConditions: 11 };
  return obj(`An admission webhook and the resources and operations it applies to (${mutating ? 'mutating' : 'validating'}).`, proto(numbers, {
    name: str('Name of the webhook, a fully qualified name such as imagepolicy.example.com.'),
    clientConfig: webhookClientConfigSchema(),
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
  }), ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions']);
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
    schema: kindSchema(n, `${kind} describes the configuration of ${mutating ? 'a mutating' : 'a validating'} admission webhook.`, proto({ webhooks: 2 }, {
      webhooks: listMap('The webhooks, each with its resources and operations.', webhookSchema(n, mutating), ['name'], 'name'),
    })),
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
  return obj(d, proto({ namespaceSelector: 1, objectSelector: 2, resourceRules: 3, excludeResourceRules: 4, matchPolicy: 7 }, {
    namespaceSelector: ref(n.meta('LabelSelector'), 'Only objects in namespaces whose labels match.'),
    objectSelector: ref(n.meta('LabelSelector'), 'Only objects whose labels match.'),
    resourceRules: atomicList('Resources and operations that match.', ruleSchema(true)),
    excludeResourceRules: atomicList('Resources and operations that do not match, even when a resourceRule does.', ruleSchema(true)),
    matchPolicy: enumOf('Exact or Equivalent (default).', ['Equivalent', 'Exact']),
  }), undefined, { 'x-orch-map-type': 'atomic' });
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
    schema: kindSchema(n, 'ValidatingAdmissionPolicy describes CEL validations evaluated in the API server, without a webhook.', proto({ spec: 2, status: 3 }, {
      spec: obj('The policy.', proto({ paramKind: 1, matchConstraints: 2, validations: 3, failurePolicy: 4, auditAnnotations: 5, matchConditions: 6, variables: 7 }, {
        paramKind: obj('Kind of the parameter objects bindings refer to.', proto({ apiVersion: 1, kind: 2 }, { apiVersion: str('group/version of the parameter kind.'), kind: str('Kind of the parameters.') }), undefined, { 'x-orch-map-type': 'atomic' }),
        matchConstraints: matchResourcesSchema(n, 'Resources the policy can validate; required.'),
        validations: atomicList('CEL validations; all must be true.', obj('One validation.', proto({ expression: 1, message: 2, reason: 3, messageExpression: 4 }, {
          expression: str('CEL over object, oldObject, request, params, namespaceObject and variables; true = valid.'),
          message: str('Message returned when the validation fails.'),
          reason: enumOf('Reason (and HTTP code) of a failure: Unauthorized, Forbidden, Invalid (default), RequestEntityTooLarge.', ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized']),
          messageExpression: str('CEL that builds the failure message (a string).'),
        }), ['expression'])),
        failurePolicy: enumOf('What happens when an expression errors or params are misconfigured: Fail (default) or Ignore.', ['Fail', 'Ignore']),
        auditAnnotations: atomicList('Audit annotations added to the request\'s audit event.', obj('One annotation.', proto({ key: 1, valueExpression: 2 }, {
          key: str('Key of the annotation (prefixed with the policy name).'),
          valueExpression: str('CEL that evaluates to a string value, or null to skip.'),
        }), ['key', 'valueExpression'])),
        matchConditions: matchConditionsSchema(),
        variables: atomicList('Named CEL values, visible to later variables and validations as variables.<name>.', obj('One variable.', proto({ name: 1, expression: 2 }, {
          name: str('Name of the variable, a CEL identifier.'),
          expression: str('CEL expression of the variable.'),
        }), ['name', 'expression'])),
      })),
      status: obj('What the server observed of the policy.', proto({ observedGeneration: 1, typeChecking: 2, conditions: 3 }, {
        observedGeneration: int64('Generation observed.', { 'x-orch-proto-omit-zero': true }),
        typeChecking: obj('Results of type checking (not produced by this server).', proto({ expressionWarnings: 1 }, {
          expressionWarnings: atomicList('Type checking warnings, one per expression.', obj('A warning about one expression.', proto({ fieldRef: 2, warning: 3 }, {
            fieldRef: str('Path of the field holding the expression, e.g. spec.validations[0].expression.'),
            warning: str('The type checking warnings, one per line.'),
          }), ['fieldRef', 'warning'])),
        })),
        conditions: conditions('meta', 'Conditions of the policy.'),
      })),
    })),
    strategy: {
      // kube's Spec and Status structs; a metav1.Condition's message has no omitempty
      zeroShape: { spec: {}, status: { conditions: each({ message: '' }) } },
      default: defaultPolicy,
      validate: validatePolicy,
      // kube's status strategy validates the conditions (ValidateValidatingAdmissionPolicyStatusUpdate)
      validateUpdate: (o, _old, sub) => (sub === 'status' ? validateMetaConditions(get(o, 'status', 'conditions'), 'status.conditions') : validatePolicy(o)),
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
    schema: kindSchema(n, 'ValidatingAdmissionPolicyBinding binds a ValidatingAdmissionPolicy to resources and parameters.', proto({ spec: 2 }, {
      spec: obj('The binding.', proto({ policyName: 1, paramRef: 2, matchResources: 3, validationActions: 4 }, {
        policyName: str('Name of the ValidatingAdmissionPolicy.'),
        paramRef: obj('Which parameter object(s) the policy is evaluated with.', proto({ name: 1, namespace: 2, selector: 3, parameterNotFoundAction: 4 }, {
          name: str('Name of the parameter object.'),
          namespace: str('Namespace of the parameter objects; empty = the request\'s namespace for namespaced parameter kinds.'),
          selector: ref(n.meta('LabelSelector'), 'Parameter objects matching these labels; the policy is evaluated with each.'),
          parameterNotFoundAction: enumOf('What happens when no parameter object is found: Allow or Deny.', ['Allow', 'Deny']),
        }), undefined, { 'x-orch-map-type': 'atomic' }),
        matchResources: matchResourcesSchema(n, 'Narrows the resources the policy applies to; absent = all the policy matches.'),
        validationActions: strings('What a failed validation does: Deny, Warn and/or Audit (Deny and Warn not together).'),
      })),
    })),
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
