// The field-number audit (protobuf-field-numbers.test.ts) for the
// admissionregistration.k8s.io/v1 and apiextensions.k8s.io/v1 kinds (docs/protobuf.md
// "Audit against generated.proto"), with the .proto text of
// test/helpers/k8s-proto-extensions.ts (Kubernetes' numbers, restated). protobufjs encodes hand-built
// messages; orch must decode them to the expected JSON, and orch's encoding
// must decode back through protobufjs to the same message.

import type protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_API_DOMAIN, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { admissionRegistrationDefinitions } from '../../src/registry/admission/kinds.js';
import { crdDefinition } from '../../src/registry/crd/kind.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import { decodeProtobufObject, encodeProtobufObjectReport } from '../../src/machinery/protobuf/codec.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { type AuditCase, auditCases, plain } from '../helpers/proto-audit.js';
import { k8sExtensionsProto as root } from '../helpers/k8s-proto-extensions.js';


const defs = builtinSchemaDefinitions();
const names = new SchemaNames(DEFAULT_API_DOMAIN);
const kinds: ResourceDefinition[] = [...admissionRegistrationDefinitions(names), crdDefinition(names, { reservedGroups: () => new Set() })];

function kind(k: string): ResourceDefinition {
  const d = kinds.find((x) => x.kind === k);
  if (!d) throw new Error(`no kind ${k}`);
  return d;
}

const T0 = { seconds: 1704164645 };
const J0 = '2024-01-02T03:04:05Z';
const raw = (v: unknown) => ({ raw: Buffer.from(JSON.stringify(v)) });
const ca = Buffer.from('-----BEGIN CERTIFICATE-----\n');

// ---------------------------------------------------------------- admissionregistration

const selector = { matchLabels: { team: 'a' }, matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['dev'] }] };
const ruleJson = { operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'deployments/scale'], scope: 'Namespaced' };
const rulePb = { operations: ['CREATE', 'UPDATE'], rule: { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'deployments/scale'], scope: 'Namespaced' } };
const namedRuleJson = { ...ruleJson, resourceNames: ['web'] };
const namedRulePb = { resourceNames: ['web'], ruleWithOperations: rulePb };
const webhookCommonJson = {
  name: 'check.example.com',
  rules: [ruleJson],
  failurePolicy: 'Ignore',
  matchPolicy: 'Exact',
  namespaceSelector: selector,
  objectSelector: { matchLabels: { checked: 'yes' } },
  sideEffects: 'None',
  timeoutSeconds: 5,
  admissionReviewVersions: ['v1', 'v1beta1'],
  matchConditions: [{ name: 'not-system', expression: "!request.userInfo.username.startsWith('system:')" }],
};
const webhookCommonPb = { ...webhookCommonJson, rules: [rulePb] };
const matchResourcesJson = { namespaceSelector: selector, objectSelector: { matchLabels: { a: 'b' } }, resourceRules: [namedRuleJson], excludeResourceRules: [{ ...ruleJson, resourceNames: ['skip'] }], matchPolicy: 'Equivalent' };
const matchResourcesPb = { namespaceSelector: selector, objectSelector: { matchLabels: { a: 'b' } }, resourceRules: [namedRulePb], excludeResourceRules: [{ ...namedRulePb, resourceNames: ['skip'] }], matchPolicy: 'Equivalent' };

/** a ValidatingAdmissionPolicy: the JSON and protobuf forms differ in the match rules and the condition time */
function policy(matchConstraints: Record<string, unknown>, time: unknown): Record<string, unknown> {
  return {
    metadata: { name: 'vap', generation: 2 },
    spec: {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints,
      validations: [{ expression: 'object.spec.replicas <= 5', message: 'too many', reason: 'Invalid', messageExpression: "'replicas: ' + string(object.spec.replicas)" }],
      failurePolicy: 'Fail',
      auditAnnotations: [{ key: 'high', valueExpression: "'yes'" }],
      matchConditions: [{ name: 'c', expression: 'true' }],
      variables: [{ name: 'r', expression: 'object.spec.replicas' }],
    },
    status: {
      observedGeneration: 2,
      typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'no such key' }] },
      conditions: [{ type: 'Ready', status: 'True', observedGeneration: 2, lastTransitionTime: time, reason: 'Checked', message: 'ok' }],
    },
  };
}

// ---------------------------------------------------------------- apiextensions: a schema using every JSONSchemaProps field kind

const nameSchema = { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z]+$', format: 'hostname' };
const schemaJson = {
  type: 'object',
  description: 'Widget',
  required: ['spec'],
  'x-kubernetes-validations': [{ rule: 'self.spec.size <= 10', message: 'too big', messageExpression: "'size ' + string(self.spec.size)", reason: 'FieldValueForbidden', fieldPath: '.spec.size', optionalOldSelf: false }],
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: 0, maximum: 10.5, exclusiveMaximum: true, multipleOf: 0.5, default: 3 },
        color: { type: 'string', enum: ['red', 'blue', null], nullable: true, example: 'red' },
        tags: { type: 'array', items: nameSchema, maxItems: 8, minItems: 0, uniqueItems: true, 'x-kubernetes-list-type': 'set' },
        ports: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: nameSchema, port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
        labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 20, minProperties: 1, 'x-kubernetes-map-type': 'atomic' },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer' }], additionalItems: false },
        free: { type: 'object', additionalProperties: true, default: { a: [1, 'x'] } },
        oneOfThem: { oneOf: [{ required: ['a'] }, { required: ['b'] }], not: { required: ['c'] }, allOf: [{ minProperties: 0 }] },
      },
    },
  },
  patternProperties: { '^x-': { type: 'string' } },
  dependencies: { a: ['b', 'c'], d: { required: ['e'] } },
  definitions: { thing: { type: 'string', title: 'Thing', id: 'thing', $schema: 'http://json-schema.org/draft-04/schema#', $ref: '#/definitions/other' } },
  externalDocs: { description: 'docs', url: 'https://example.com' },
};
const namePb = { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z]+$', format: 'hostname' };
const schemaPb = {
  type: 'object',
  description: 'Widget',
  required: ['spec'],
  xKubernetesValidations: [{ rule: 'self.spec.size <= 10', message: 'too big', messageExpression: "'size ' + string(self.spec.size)", reason: 'FieldValueForbidden', fieldPath: '.spec.size', optionalOldSelf: false }],
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'integer', minimum: 0, maximum: 10.5, exclusiveMaximum: true, multipleOf: 0.5, default: raw(3) },
        color: { type: 'string', enum: [raw('red'), raw('blue'), raw(null)], nullable: true, example: raw('red') },
        tags: { type: 'array', items: { schema: namePb }, maxItems: 8, minItems: 0, uniqueItems: true, xKubernetesListType: 'set' },
        ports: {
          type: 'array',
          items: { schema: { type: 'object', required: ['name'], properties: { name: namePb, port: { xKubernetesIntOrString: true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } } },
          xKubernetesListType: 'map',
          xKubernetesListMapKeys: ['name'],
        },
        labels: { type: 'object', additionalProperties: { allows: true, schema: { type: 'string' } }, maxProperties: 20, minProperties: 1, xKubernetesMapType: 'atomic' },
        template: { type: 'object', xKubernetesEmbeddedResource: true, xKubernetesPreserveUnknownFields: true },
        tuple: { type: 'array', items: { jSONSchemas: [{ type: 'string' }, { type: 'integer' }] }, additionalItems: { allows: false } },
        free: { type: 'object', additionalProperties: { allows: true }, default: raw({ a: [1, 'x'] }) },
        oneOfThem: { oneOf: [{ required: ['a'] }, { required: ['b'] }], not: { required: ['c'] }, allOf: [{ minProperties: 0 }] },
      },
    },
  },
  patternProperties: { '^x-': { type: 'string' } },
  dependencies: { a: { property: ['b', 'c'] }, d: { schema: { required: ['e'] } } },
  definitions: { thing: { type: 'string', title: 'Thing', id: 'thing', schema: 'http://json-schema.org/draft-04/schema#', ref: '#/definitions/other' } },
  externalDocs: { description: 'docs', url: 'https://example.com' },
};
const crdNames = { plural: 'widgets', singular: 'widget', shortNames: ['wd'], kind: 'Widget', listKind: 'WidgetList', categories: ['all'] };
const column = { name: 'Size', type: 'integer', format: 'int32', description: 'size', priority: 1, jsonPath: '.spec.size' };
const clientConfigJson = { service: { namespace: 'ns', name: 'conv', path: '/convert', port: 8443 }, caBundle: ca.toString('base64') };
const clientConfigPb = { service: { namespace: 'ns', name: 'conv', path: '/convert', port: 8443 }, caBundle: ca };

function crdVersion(schemaForm: Record<string, unknown>, subresourceStatus: Record<string, unknown>) {
  return {
    name: 'v1',
    served: true,
    storage: true,
    deprecated: true,
    deprecationWarning: 'use v2',
    schema: { openAPIV3Schema: schemaForm },
    subresources: { status: subresourceStatus, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size', labelSelectorPath: '.status.selector' } },
    additionalPrinterColumns: [column],
    selectableFields: [{ jsonPath: '.spec.color' }],
  };
}

interface Case extends AuditCase {
  kind: string;
}

const CASES: Case[] = [
  {
    name: 'ValidatingWebhookConfiguration: webhooks = 2, objectSelector 10, matchConditions 11, Rule inlined in RuleWithOperations at 2',
    kind: 'ValidatingWebhookConfiguration',
    message: 'k8s.ValidatingWebhookConfiguration',
    pb: { metadata: { name: 'vwc', generation: 1 }, webhooks: [{ ...webhookCommonPb, clientConfig: { url: 'https://hook.example.com/validate', caBundle: ca } }] },
    json: { metadata: { name: 'vwc', generation: 1 }, webhooks: [{ ...webhookCommonJson, clientConfig: { url: 'https://hook.example.com/validate', caBundle: ca.toString('base64') } }] },
  },
  {
    name: 'MutatingWebhookConfiguration: reinvocationPolicy 10, objectSelector 11, matchConditions 12, clientConfig.service = 1',
    kind: 'MutatingWebhookConfiguration',
    message: 'k8s.MutatingWebhookConfiguration',
    pb: { metadata: { name: 'mwc' }, webhooks: [{ ...webhookCommonPb, reinvocationPolicy: 'IfNeeded', clientConfig: { service: { namespace: 'ns', name: 'hook', path: '/mutate', port: 443 } } }] },
    json: { metadata: { name: 'mwc' }, webhooks: [{ ...webhookCommonJson, reinvocationPolicy: 'IfNeeded', clientConfig: { service: { namespace: 'ns', name: 'hook', path: '/mutate', port: 443 } } }] },
  },
  {
    name: 'ValidatingAdmissionPolicy: spec 1-7, NamedRuleWithOperations (RuleWithOperations inlined at 2, Rule at 2 in it), status',
    kind: 'ValidatingAdmissionPolicy',
    message: 'k8s.ValidatingAdmissionPolicy',
    pb: policy(matchResourcesPb, T0),
    json: policy(matchResourcesJson, J0),
  },
  {
    name: 'ValidatingAdmissionPolicyBinding: policyName 1, paramRef 2 (selector 3), matchResources 3, validationActions 4',
    kind: 'ValidatingAdmissionPolicyBinding',
    message: 'k8s.ValidatingAdmissionPolicyBinding',
    pb: { metadata: { name: 'b' }, spec: { policyName: 'vap', paramRef: { namespace: 'ns', selector, parameterNotFoundAction: 'Deny' }, matchResources: matchResourcesPb, validationActions: ['Deny', 'Audit'] } },
    json: { metadata: { name: 'b' }, spec: { policyName: 'vap', paramRef: { namespace: 'ns', selector, parameterNotFoundAction: 'Deny' }, matchResources: matchResourcesJson, validationActions: ['Deny', 'Audit'] } },
  },
  {
    name: 'CustomResourceDefinition: spec (names 3, versions 7, conversion 9), every JSONSchemaProps field kind, status',
    kind: 'CustomResourceDefinition',
    message: 'k8s.CustomResourceDefinition',
    pb: {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: crdNames,
        scope: 'Namespaced',
        versions: [crdVersion(schemaPb, {})],
        conversion: { strategy: 'Webhook', webhook: { clientConfig: clientConfigPb, conversionReviewVersions: ['v1'] } },
      },
      status: { conditions: [{ type: 'Established', status: 'True', lastTransitionTime: T0, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }], acceptedNames: crdNames, storedVersions: ['v1'] },
    },
    json: {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: crdNames,
        scope: 'Namespaced',
        versions: [crdVersion(schemaJson, {})],
        conversion: { strategy: 'Webhook', webhook: { clientConfig: clientConfigJson, conversionReviewVersions: ['v1'] } },
      },
      status: { conditions: [{ type: 'Established', status: 'True', lastTransitionTime: J0, reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }], acceptedNames: crdNames, storedVersions: ['v1'] },
    },
  },
];

const encodeK8s = (message: string, pb: Record<string, unknown>): Uint8Array => {
  const type = root.lookupType(message);
  return type.encode(type.fromObject(pb)).finish();
};

describe('admissionregistration and apiextensions field numbers against Kubernetes generated.proto', () => {
  auditCases(CASES, root, (c) => kind(c.kind), defs);

  it('reads the zero values Go always writes (non-pointer fields) as absent, as the JSON form omits them', () => {
    // Go marshals non-pointer fields even when zero: "" strings, false omitempty bools, 0 omitempty numbers
    const zeroSchema = { id: '', schema: '', ref: '', description: '', type: 'string', format: '', title: '', pattern: '', exclusiveMaximum: false, exclusiveMinimum: false, uniqueItems: false, nullable: false, xKubernetesEmbeddedResource: false, xKubernetesIntOrString: false };
    const pb = {
      metadata: { name: 'w.example.com' },
      spec: {
        group: 'example.com', names: { plural: 'w', kind: 'W', singular: '', listKind: '' }, scope: 'Cluster', preserveUnknownFields: false,
        versions: [{ name: 'v1', served: false, storage: true, deprecated: false, deprecationWarning: '', schema: { openAPIV3Schema: { ...zeroSchema, properties: { a: { ...zeroSchema, additionalProperties: { allows: false } } } } }, additionalPrinterColumns: [{ name: 'A', type: 'string', jsonPath: '.a', priority: 0, format: '', description: '' }] }],
      },
    };
    expect(decodeProtobufObject(encodeK8s('k8s.CustomResourceDefinition', pb), kind('CustomResourceDefinition'), defs)).toEqual({
      metadata: { name: 'w.example.com' },
      spec: {
        group: 'example.com', names: { plural: 'w', kind: 'W' }, scope: 'Cluster',
        // served/storage have no omitempty: false stays
        versions: [{ name: 'v1', served: false, storage: true, schema: { openAPIV3Schema: { type: 'string', properties: { a: { type: 'string', additionalProperties: false } } } }, additionalPrinterColumns: [{ name: 'A', type: 'string', jsonPath: '.a' }] }],
      },
    });
    const vap = encodeK8s('k8s.ValidatingAdmissionPolicy', { metadata: { name: 'p' }, status: { observedGeneration: 0 } });
    expect(decodeProtobufObject(vap, kind('ValidatingAdmissionPolicy'), defs)).toEqual({ metadata: { name: 'p' }, status: {} });
  });

  it('carries x-orch-* markers of a CRD schema in the Kubernetes fields, and reports what protobuf cannot carry', () => {
    const schema = { type: 'object', 'x-orch-preserve-unknown-fields': true, properties: { a: { type: 'array', 'x-orch-list-type': 'atomic', items: { type: 'string' } } }, bogus: 1 };
    const crd = { metadata: { name: 'w.example.com' }, spec: { group: 'example.com', names: { plural: 'w', kind: 'W' }, scope: 'Cluster', versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] } };
    const { bytes, skipped } = encodeProtobufObjectReport(crd, kind('CustomResourceDefinition'), defs);
    expect(skipped).toEqual(['spec.versions[0].schema.openAPIV3Schema.bogus']);
    const type = root.lookupType('k8s.CustomResourceDefinition');
    const got = plain(type, bytes) as { spec: { versions: { schema: { openAPIV3Schema: unknown } }[] } };
    expect(got.spec.versions[0]!.schema.openAPIV3Schema).toEqual({ type: 'object', xKubernetesPreserveUnknownFields: true, properties: { a: { type: 'array', xKubernetesListType: 'atomic', items: { schema: { type: 'string' } } } } });
  });

  it('rejects a JSONSchemaProps field with the wrong wire type', () => {
    // CustomResourceDefinition{spec{versions[{schema{openAPIV3Schema{type (5) as a varint}}}]}}
    const schemaBytes = Uint8Array.from([0x28, 0x01]);
    const bytes = encodeK8s('k8s.CustomResourceDefinition', { spec: { versions: [{ name: 'v1' }] } });
    const type = root.lookupType('k8s.CustomResourceDefinition');
    expect(plain(type, bytes)).toEqual({ spec: { versions: [{ name: 'v1' }] } });
    const validation = Buffer.concat([Buffer.from([0x0a, schemaBytes.length]), schemaBytes]); // openAPIV3Schema = 1
    const version = Buffer.concat([Buffer.from([0x0a, 0x02]), Buffer.from('v1'), Buffer.from([0x22, validation.length]), validation]); // name = 1, schema = 4
    const spec = Buffer.concat([Buffer.from([0x3a, version.length]), version]); // versions = 7
    const crd = Buffer.concat([Buffer.from([0x12, spec.length]), spec]); // spec = 2
    expect(() => decodeProtobufObject(crd, kind('CustomResourceDefinition'), defs)).toThrow(/wire type 0, expected 2/);
  });
});
