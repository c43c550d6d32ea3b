// The served documents carry kube 1.32's `required` lists
// (src/registry/openapi-kube-required.ts): every member kube's OpenAPI marks
// required, though orch's schema (which drives validation) leaves it to a
// zero shape or to handwritten validation; validation itself is unchanged.

import * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import { admissionRegistrationDefinitions } from '../../src/registry/admission/kinds.js';
import { crdDefinition } from '../../src/registry/crd/kind.js';
import { OpenAPIDocuments, buildOpenAPIV2 } from '../../src/registry/openapi.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';

type J = Record<string, any>;
const domain = 'k8s.io';
const n = new SchemaNames(domain);
const kinds = [...builtinDefinitions(domain), ...admissionRegistrationDefinitions(n), crdDefinition(n, { reservedGroups: () => new Set() })];
const defs = builtinSchemaDefinitions(domain);
const reg = new Registry(domain, defs, kinds);

describe('required lists of the served documents', () => {
  const v2 = buildOpenAPIV2(reg).definitions as J;
  const v3 = new OpenAPIDocuments(reg).v3('api/v1')!.doc as J;

  it('are kube\'s, in v2 and v3', () => {
    for (const schemas of [v2, v3.components.schemas]) {
      expect([...schemas['io.k8s.api.core.v1.PreferredSchedulingTerm'].required].sort()).toEqual(['preference', 'weight']);
      expect([...schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Condition'].required].sort()).toEqual(['lastTransitionTime', 'message', 'reason', 'status', 'type']);
      expect(schemas['io.k8s.api.core.v1.EphemeralVolumeSource'].required).toBeUndefined();
    }
    expect([...v2['io.k8s.api.apps.v1.DaemonSetStatus'].required].sort()).toEqual(['currentNumberScheduled', 'desiredNumberScheduled', 'numberMisscheduled', 'numberReady']);
  });

  it('match the generated client models (kube 1.33\'s @kubernetes/client-node) for every definition both have', () => {
    const differ: string[] = [];
    for (const [name, s] of Object.entries(v2)) {
      const [type, version, group] = name.split('.').reverse() as [string, string, string];
      const V = `${version[0]!.toUpperCase()}${version.slice(1)}`;
      const G = `${group[0]!.toUpperCase()}${group.slice(1)}`;
      const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => { name: string }[] }>)[`${G}${V}${type}`] ?? (k8s as never)[`${V}${type}`];
      if (!model || name.includes('.v1beta1.')) continue;
      // the models' own required lists are not exported; their type maps list every member
      const members = new Set(model.getAttributeTypeMap!().map((a) => a.name));
      for (const r of (s.required ?? []) as string[]) if (!members.has(r)) differ.push(`${name}.${r}`);
    }
    expect(differ).toEqual([]);
  });

  it('leave validation as it was: a pod\'s ephemeral volume still needs its claim template', () => {
    const pod = kinds.find((d) => d.kind === 'Pod')!;
    const o = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'v', ephemeral: {} }] } };
    expect(validateAgainstSchema(o, pod.schema, defs).errors.map((e) => e.field)).toEqual(['spec.volumes[0].ephemeral.volumeClaimTemplate']);
  });
});
