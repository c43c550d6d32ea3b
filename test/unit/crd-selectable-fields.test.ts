// A CRD version's selectableFields (kube's validateSelectableFields): simple
// paths, not under metadata, at most 8, no duplicates, and each to a string,
// boolean or integer field the version's schema declares.
import { describe, expect, it } from 'vitest';
import { validateCrd } from '../../src/registry/crd/validate.js';
import type { ApiObject } from '../../src/registry/types.js';

const ctx = { apiDomain: 'orch.io', reservedGroups: () => new Set<string>() };
const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          color: { type: 'string', enum: ['red', 'blue'] },
          size: { type: 'integer' },
          on: { type: 'boolean' },
          ratio: { type: 'number' },
          bars: { type: 'array', items: { type: 'string' } },
          nested: { type: 'object', properties: { name: { type: 'string', format: 'hostname' } } },
        },
      },
    },
  },
};
const crd = (paths: string[]): ApiObject => ({
  metadata: { name: 'things.x.example.com' },
  spec: {
    group: 'x.example.com',
    scope: 'Namespaced',
    names: { plural: 'things', kind: 'Thing' },
    versions: [{ name: 'v1', served: true, storage: true, schema, selectableFields: paths.map((jsonPath) => ({ jsonPath })) }],
  },
});
const errors = (paths: string[]) => validateCrd(crd(paths), ctx).map((e) => `${e.field}: ${e.message}`);

describe('selectableFields', () => {
  it('accepts string (enum, format), integer and boolean fields', () => {
    expect(errors(['.spec.color', '.spec.size', '.spec.on', '.spec.nested.name'])).toEqual([]);
  });

  it("refuses other types and undeclared fields with kube's words", () => {
    const only = 'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.';
    expect(errors(['.spec.ratio', '.spec.bars', '.spec.nested', '.spec.missing'])).toEqual([
      `spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.ratio": ${only}`,
      `spec.versions[0].selectableFields[1].jsonPath: Invalid value: ".spec.bars": ${only}`,
      `spec.versions[0].selectableFields[2].jsonPath: Invalid value: ".spec.nested": ${only}`,
      'spec.versions[0].selectableFields[3].jsonPath: Invalid value: ".spec.missing": is an invalid path: does not refer to a valid field',
    ]);
  });

  it('refuses duplicates and more than 8', () => {
    expect(errors(['.spec.color', '.spec.color'])).toEqual(['spec.versions[0].selectableFields[1].jsonPath: Duplicate value: ".spec.color"']);
    expect(errors(Array.from({ length: 9 }, () => '.spec.size')).some((e) => e.startsWith('spec.versions[0].selectableFields: Too many: 9'))).toBe(true);
  });
});
