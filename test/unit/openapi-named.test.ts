// Named structures in the served OpenAPI documents (src/registry/openapi-hoist.ts,
// docs/schemas.md "Named structures"): the structures orch writes inline are
// published under Kubernetes' definition names, which the kube clients
// generated from Kubernetes' own document know (@kubernetes/client-node here,
// whose model names are the Python and Java clients' too).

import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import { crdDefinition } from '../../src/registry/crd/kind.js';
import { admissionRegistrationDefinitions } from '../../src/registry/admission/kinds.js';
import { OpenAPIDocuments, buildOpenAPIV2 } from '../../src/registry/openapi.js';

type J = Record<string, any>;

/** the kinds the server serves (src/server/stores-setup.ts, crd-setup.ts) */
function registry(domain: string): Registry {
  const n = new SchemaNames(domain);
  const defs = [...builtinDefinitions(domain), ...admissionRegistrationDefinitions(n), crdDefinition(n, { reservedGroups: () => new Set() })];
  return new Registry(domain, builtinSchemaDefinitions(domain), defs);
}

/** the schema a property, item or value slot refers to, by definition name */
function target(s: J | undefined): string | undefined {
  const r = s?.$ref ?? s?.allOf?.[0]?.$ref;
  return typeof r === 'string' ? r.slice(r.lastIndexOf('/') + 1) : undefined;
}

/** every inline object structure left in the definitions, as `<definition>.<path>` */
function inlineObjects(defs: J): string[] {
  const out: string[] = [];
  const walk = (s: J, path: string): void => {
    for (const [p, c] of Object.entries<J>(s.properties ?? {})) {
      for (const [slot, x] of [['', c], ['[]', c.items], ['{}', c.additionalProperties]] as const) {
        if (!x || typeof x !== 'object' || x.$ref || x.allOf) continue;
        if (x.type === 'object' && (x.properties || !x.additionalProperties)) out.push(`${path}.${p}${slot}`);
        walk(x, `${path}.${p}${slot}`);
      }
    }
  };
  for (const [name, s] of Object.entries<J>(defs)) walk(s, name);
  return out;
}

describe.each(['k8s.io', 'orch.io'])('named structures (--api-domain %s)', (domain) => {
  const reg = registry(domain);
  const rev = domain.split('.').reverse().join('.');
  const v2 = buildOpenAPIV2(reg) as J;
  const docs = new OpenAPIDocuments(reg);
  const v3Docs = Object.keys(JSON.parse(docs.v3Index().json).paths).map((p) => docs.v3(p)!.doc as J);

  it('leaves no inline object in any definition of a built-in kind, in v2 and every v3 document', () => {
    expect(inlineObjects(v2.definitions)).toEqual([]);
    for (const d of v3Docs) expect(inlineObjects(d.components.schemas)).toEqual([]);
  });

  it('publishes Kubernetes names where kubectl explain prints them', () => {
    const d = v2.definitions;
    const n = (x: string) => `${rev}.${x}`;
    expect(target(d[n('api.core.v1.Service')].properties.spec)).toBe(n('api.core.v1.ServiceSpec'));
    expect(target(d[n('api.core.v1.ServiceSpec')].properties.ports.items)).toBe(n('api.core.v1.ServicePort'));
    expect(target(d[n('api.core.v1.NodeStatus')].properties.conditions.items)).toBe(n('api.core.v1.NodeCondition'));
    expect(target(d[n('api.core.v1.Volume')].properties.projected)).toBe(n('api.core.v1.ProjectedVolumeSource'));
    expect(target(d[n('api.apps.v1.RollingUpdateDeployment')].properties.maxSurge)).toBe(n('apimachinery.pkg.util.intstr.IntOrString'));
    expect(target(d[n('apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry')].properties.fieldsV1)).toBe(n('apimachinery.pkg.apis.meta.v1.FieldsV1'));
    expect(target(d[n('api.apps.v1.ControllerRevision')].properties.data)).toBe(n('apimachinery.pkg.runtime.RawExtension'));
    // the two groups Kubernetes serves from other modules keep those modules' names
    expect(d[n('apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition')]).toBeDefined();
    expect(d[n('kube-aggregator.pkg.apis.apiregistration.v1.APIService')]).toBeDefined();
  });

  it('keeps the apply and patch markers: list types on the field, map type on the structure', () => {
    const d = v2.definitions;
    const ports = d[`${rev}.api.core.v1.ServiceSpec`].properties.ports;
    expect(ports).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port', 'protocol'], 'x-kubernetes-patch-merge-key': 'port', 'x-kubernetes-patch-strategy': 'merge' });
    const conditions = d[`${rev}.api.core.v1.NodeStatus`].properties.conditions;
    expect(conditions).toMatchObject({ 'x-kubernetes-patch-merge-key': 'type', 'x-kubernetes-patch-strategy': 'merge' });
    expect(d[`${rev}.api.core.v1.ObjectFieldSelector`]['x-kubernetes-map-type']).toBe('atomic');
    // a patch strategy of an object field stays beside the reference, as in Kubernetes
    expect(d[`${rev}.api.apps.v1.DeploymentSpec`].properties.strategy).toMatchObject({ $ref: `#/definitions/${rev}.api.apps.v1.DeploymentStrategy`, 'x-kubernetes-patch-strategy': 'retainKeys' });
    expect(d[`${rev}.api.apps.v1.DeploymentStrategy`]['x-kubernetes-patch-strategy']).toBeUndefined();
    expect(d[`${rev}.api.core.v1.PodSpec`].properties.volumes['x-kubernetes-patch-strategy']).toBe('merge,retainKeys');
    expect(d[`${rev}.api.batch.v1.JobStatus`].properties.conditions).toMatchObject({ 'x-kubernetes-list-type': 'atomic', 'x-kubernetes-patch-strategy': 'merge', 'x-kubernetes-patch-merge-key': 'type' });
    // the field keeps its description; the structure hoisted from it none, so explain prints it once
    expect(d[`${rev}.api.core.v1.Service`].properties.spec.description).toBeTruthy();
    expect(d[`${rev}.api.core.v1.ServiceSpec`].description).toBeUndefined();
    expect(d[`${rev}.api.core.v1.ServicePort`].description).toBeTruthy();
  });

  it("publishes JSONSchemaProps recursively, with the markers of every accepted prefix (kube's only with its domain)", () => {
    const pkg = `${rev}.apiextensions-apiserver.pkg.apis.apiextensions.v1`;
    for (const [schemas, prefix] of [[v2.definitions, '#/definitions/'], [v3Docs.find((x) => x.components.schemas[`${pkg}.CustomResourceDefinition`])!.components.schemas, '#/components/schemas/']] as const) {
      expect(target(schemas[`${pkg}.CustomResourceValidation`].properties.openAPIV3Schema)).toBe(`${pkg}.JSONSchemaProps`);
      const props = schemas[`${pkg}.JSONSchemaProps`].properties;
      expect(props.properties.additionalProperties.$ref).toBe(`${prefix}${pkg}.JSONSchemaProps`);
      expect(props.items.$ref ?? props.items.allOf[0].$ref).toBe(`${prefix}${pkg}.JSONSchemaPropsOrArray`);
      const own = `x-${domain.split('.')[0]}-`;
      for (const p of domain === 'k8s.io' ? ['x-kubernetes-'] : ['x-kubernetes-', own]) {
        expect(props[`${p}preserve-unknown-fields`].type).toBe('boolean');
        expect(props[`${p}validations`]).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-patch-merge-key': 'rule' });
      }
      if (domain === 'k8s.io') expect(props[`${own}preserve-unknown-fields`]).toBeUndefined();
    }
  });

  it("lists strategic merge for the CRD kind's patches in v2, not in v3 (kubectl's v3 patch lookup cannot walk JSONSchemaProps' maps)", () => {
    const group = `apiextensions.${domain}`;
    const path = `/apis/${group}/v1/customresourcedefinitions/{name}`;
    expect(v2.paths[path].patch.consumes).toContain('application/strategic-merge-patch+json');
    const v3 = docs.v3(`apis/${group}/v1`)!.doc as J;
    expect(Object.keys(v3.paths[path].patch.requestBody.content)).not.toContain('application/strategic-merge-patch+json');
    expect(Object.keys(v3.paths[path].patch.requestBody.content)).toContain('application/apply-patch+yaml');
    expect(Object.keys((docs.v3('api/v1')!.doc as J).paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch.requestBody.content)).toContain('application/strategic-merge-patch+json');
  });

  it('names definitions as the kube clients generated from Kubernetes\' document do (@kubernetes/client-node models)', () => {
    if (domain !== 'k8s.io') return;
    const models = new Set(Object.keys(k8s));
    // Kubernetes' primitive-like types the generated clients map to strings, numbers or plain objects,
    // and kinds the client does not have (kube 1.32's v1beta1 TokenReview)
    const primitive = /\.(IntOrString|Quantity|FieldsV1|RawExtension|Patch|JSON|JSONSchemaPropsOr\w+|CustomResourceSubresourceStatus)$|authentication\.v1beta1\./;
    const missing = Object.keys(v2.definitions).filter((name) => {
      if (primitive.test(name)) return false;
      const [type, version, group] = name.split('.').reverse() as [string, string, string];
      const V = `${version[0]!.toUpperCase()}${version.slice(1)}`;
      const G = group.split('-').map((x) => `${x[0]!.toUpperCase()}${x.slice(1)}`).join('');
      return !models.has(`${V}${type}`) && !models.has(`${G}${V}${type}`);
    });
    expect(missing).toEqual([]);
  });
});
