// Wording and order of strict decoding errors (src/machinery/schema/strict-decoding.ts),
// as kube 1.32's test/integration/apiserver/field_validation_test.go expects them.

import { describe, expect, it } from 'vitest';
import { findDuplicateKeys, firstKeyOffsets } from '../../src/machinery/schema/duplicates.js';
import { compareFieldPaths, crdUnknownOrder, strictDecodingErrors, typedJsonErrors } from '../../src/machinery/schema/strict-decoding.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';

describe('findDuplicateKeys / firstKeyOffsets', () => {
  it('gives where each repeated key and each first occurrence starts', () => {
    const text = '{"a":1,"b":{"c":1},"a":2}';
    expect(findDuplicateKeys(text)).toEqual([{ path: 'a', offset: text.lastIndexOf('"a"') }]);
    expect(firstKeyOffsets(text, new Set(['b.c', 'zz']))).toEqual(new Map([['b.c', text.indexOf('"c"')]]));
  });
});

describe('typedJsonErrors (kube post-warn-validation)', () => {
  it('keeps document order, and a duplicated unknown field (or one below it) is only unknown', () => {
    const text = '{"metadata":{"name":"x","name":"y","unknownMeta":1},"spec":{"unknownDupe":1,"unknownDupe":2,"u":{"a":1,"a":2},"paused":true,"paused":false}}';
    const unknown = ['metadata.unknownMeta', 'spec.unknownDupe', 'spec.u'];
    expect(typedJsonErrors(text, findDuplicateKeys(text), unknown)).toEqual([
      'duplicate field "metadata.name"',
      'unknown field "metadata.unknownMeta"',
      'unknown field "spec.unknownDupe"',
      'unknown field "spec.u"',
      'duplicate field "spec.paused"',
    ]);
  });

  it('a duplicate placed after an unknown field nested in a sibling comes after it', () => {
    const text = '{"a":1,"x":{"unk":1},"a":2}';
    expect(typedJsonErrors(text, findDuplicateKeys(text), ['x.unk'])).toEqual(['unknown field "x.unk"', 'duplicate field "a"']);
  });
});

describe('strictDecodingErrors', () => {
  it('YAML: the duplicate key lines first (one yaml.v2 error under Strict), then unknown fields in sorted-JSON order', () => {
    const found = { kind: 'first' as const, problems: ['line 5: key "name" already set in map', 'line 14: key "paused" already set in map'], yaml: true, sortUnknown: true };
    const unknown = ['metadata.unknownMeta', 'spec.unknown1', 'spec.template.spec.containers[0].unknownNested'];
    expect(strictDecodingErrors(found, unknown, false)).toEqual([
      'line 5: key "name" already set in map',
      'line 14: key "paused" already set in map',
      'unknown field "metadata.unknownMeta"',
      'unknown field "spec.template.spec.containers[0].unknownNested"',
      'unknown field "spec.unknown1"',
    ]);
    expect(strictDecodingErrors(found, unknown, true)[0]).toBe('yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 14: key "paused" already set in map');
  });

  it('nothing found is nothing reported', () => {
    expect(strictDecodingErrors({ kind: 'typed-json', text: '{}', duplicates: [] }, [], false)).toEqual([]);
    expect(strictDecodingErrors(undefined, ['a'], true)).toEqual(['unknown field "a"']);
  });
});

describe('compareFieldPaths', () => {
  it('orders segment by segment, array indexes numerically', () => {
    expect(['spec.unknown1', 'spec.a[10].x', 'spec.a[2].x', 'metadata.z', 'spec.template.x'].sort(compareFieldPaths))
      .toEqual(['metadata.z', 'spec.a[2].x', 'spec.a[10].x', 'spec.template.x', 'spec.unknown1']);
  });
});

describe('crdUnknownOrder (kube crd-post-warn-validation)', () => {
  it('root metadata first, then pruned fields sorted, then an embedded resource\'s metadata', () => {
    const found = ['spec.unknown1', 'metadata.unknownMeta', 'spec.embeddedObj.metadata.x', 'spec.ports[0].unknownNested'];
    expect(crdUnknownOrder(found, ['spec.embeddedObj.metadata.x']))
      .toEqual(['metadata.unknownMeta', 'spec.ports[0].unknownNested', 'spec.unknown1', 'spec.embeddedObj.metadata.x']);
  });

  it('the walk names the unknown fields of an embedded resource\'s metadata', () => {
    const schema = {
      type: 'object' as const,
      properties: {
        e: {
          type: 'object' as const,
          'x-orch-embedded-resource': true,
          properties: { metadata: { type: 'object' as const, properties: { name: { type: 'string' as const } } } },
        },
      },
    };
    const r = validateAgainstSchema({ e: { apiVersion: 'v1', kind: 'K', metadata: { name: 'n', bad: 1 } }, top: 1 }, schema, {});
    expect(r.unknownFields).toEqual(['e.metadata.bad', 'top']);
    expect(r.embeddedMetaUnknown).toEqual(['e.metadata.bad']);
  });
});
