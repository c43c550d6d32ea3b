// Validation and defaults of RuntimeClass, the CSI kinds and the flow-control
// kinds (kube 1.32's pkg/apis/{node,storage,flowcontrol}/validation): field
// paths and messages as kube prints them.

import { describe, expect, it } from 'vitest';
import { builtinDefinitions, builtinSchemaDefinitions } from '../../src/registry/kinds/index.js';
import { applyDefaults } from '../../src/machinery/schema/defaults.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import { validateObjectMeta } from '../../src/machinery/schema/object-meta.js';
import type { ApiObject, FieldError, ResourceDefinition } from '../../src/registry/types.js';

const kinds = builtinDefinitions('k8s.io');
const defs = builtinSchemaDefinitions('k8s.io');
const kind = (k: string): ResourceDefinition => kinds.find((d) => d.kind === k)!;

/** the store's create pipeline: strategy default, prepare, schema defaults, validation */
function create(k: string, o: ApiObject): { obj: ApiObject; errors: FieldError[] } {
  const def = kind(k);
  const obj = structuredClone(o);
  def.strategy.default?.(obj);
  def.strategy.prepareForCreate?.(obj);
  applyDefaults(obj, def.schema, defs);
  const errors = [
    ...validateAgainstSchema(obj, def.schema, defs).errors,
    ...validateObjectMeta(obj.metadata, { namespaced: def.scope === 'Namespaced', nameValidation: def.nameValidation }),
    ...(def.strategy.validate?.(obj) ?? []),
  ];
  return { obj, errors };
}

function update(k: string, next: ApiObject, old: ApiObject): FieldError[] {
  const def = kind(k);
  const obj = structuredClone(next);
  def.strategy.default?.(obj);
  return def.strategy.validateUpdate?.(obj, old) ?? [];
}

const brief = (errs: FieldError[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('RuntimeClass', () => {
  const rc = (extra: Record<string, unknown>): ApiObject => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name: 'r' }, handler: 'runc', ...extra });
  it('accepts a full object', () => {
    expect(create('RuntimeClass', rc({ overhead: { podFixed: { cpu: '1' } }, scheduling: { nodeSelector: { a: 'b' }, tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 5 }] } })).errors).toEqual([]);
  });
  it('refuses a handler that is not a DNS label, negative overhead and bad tolerations', () => {
    const { errors } = create('RuntimeClass', rc({
      handler: 'a.b', overhead: { podFixed: { memory: '-1Mi' } },
      scheduling: { tolerations: [{ operator: 'Exists', value: 'x' }, { key: 'k', operator: 'Less' }, { key: 'k', operator: 'Exists', tolerationSeconds: 3 }] },
    }));
    const out = brief(errors);
    expect(out).toContainEqual(expect.stringMatching(/^handler: Invalid value: "a\.b": a lowercase RFC 1123 label must consist of/));
    expect(out).toContain('overhead.limits[memory]: Invalid value: "-1Mi": must be greater than or equal to 0');
    expect(out).toContain('scheduling.tolerations[0].operator: Invalid value: {"operator":"Exists","value":"x"}: value must be empty when `operator` is \'Exists\'');
    expect(out).toContain('scheduling.tolerations[1].operator: Unsupported value: "Less": supported values: "Equal", "Exists"');
    expect(out).toContain('scheduling.tolerations[2].effect: Invalid value: "": effect must be \'NoExecute\' when `tolerationSeconds` is set');
  });
  it('handler is immutable, the rest is not', () => {
    const old = create('RuntimeClass', rc({})).obj;
    expect(brief(update('RuntimeClass', { ...old, handler: 'kata' }, old))).toEqual(['handler: Invalid value: "kata": field is immutable']);
    expect(update('RuntimeClass', { ...old, overhead: { podFixed: { cpu: '2' } } }, old)).toEqual([]);
  });
});
