// kube's weakening of CRD schemas in /openapi/v2 (kubectl's client-side
// validation reads v2 and rejects fields a typed object does not list).

import { describe, expect, it } from 'vitest';
import { crdSchemaForV2 } from '../../src/registry/openapi-crd-v2.js';
import type { Schema } from '../../src/machinery/schema/types.js';

describe('crdSchemaForV2', () => {
  it('publishes a root that preserves unknown fields as a bare object', () => {
    const root: Schema = { type: 'object', 'x-orch-preserve-unknown-fields': true, properties: { metadata: { $ref: 'Meta' }, kind: { type: 'string' } } };
    expect(crdSchemaForV2(root)).toEqual({ type: 'object' });
  });

  it('drops properties and items below nodes that preserve unknown fields or are nullable', () => {
    const root: Schema = {
      type: 'object',
      required: ['spec', 'opt'],
      properties: {
        spec: { type: 'object', 'x-orch-preserve-unknown-fields': true, properties: { a: { type: 'string' } } },
        opt: { type: 'object', nullable: true, properties: { b: { type: 'string' } } },
        list: { type: 'array', 'x-orch-preserve-unknown-fields': true, items: { type: 'string' } },
        map: { type: 'object', additionalProperties: { type: 'array', nullable: true, items: { type: 'string' } } },
        kept: { type: 'array', items: { type: 'integer' } },
      },
    };
    expect(crdSchemaForV2(root)).toEqual({
      type: 'object',
      required: ['spec'],
      properties: {
        spec: { type: 'object', 'x-orch-preserve-unknown-fields': true },
        opt: { nullable: true },
        list: { 'x-orch-preserve-unknown-fields': true },
        map: { type: 'object', additionalProperties: { nullable: true } },
        kept: { type: 'array', items: { type: 'integer' } },
      },
    });
  });

  it('does not change the schema it is given', () => {
    const root: Schema = { type: 'object', properties: { x: { type: 'object', nullable: true, properties: { y: { type: 'string' } } } } };
    const before = structuredClone(root);
    crdSchemaForV2(root);
    expect(root).toEqual(before);
  });
});
