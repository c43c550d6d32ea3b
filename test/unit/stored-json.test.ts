// The create response is the stored JSON text with the resourceVersion
// spliced into metadata: it must be byte-for-byte what JSON.stringify of the
// object with its resourceVersion gives.

import { describe, expect, it } from 'vitest';
import { encodeStoredJson } from '../../src/registry/stored-json.js';
import type { ApiObject } from '../../src/registry/types.js';

const withRv = (o: ApiObject, rv: string): ApiObject => {
  const c = structuredClone(o);
  c.metadata = { ...(c.metadata ?? {}), resourceVersion: rv };
  return c;
};

const objects: ApiObject[] = [
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default', uid: 'u' }, data: { v: 'x'.repeat(100) } },
  // metadata not second, an empty metadata, unicode and escapes, a nested "metadata" key
  { kind: 'Pod', apiVersion: 'v1', spec: { template: { metadata: { labels: { a: 'b' } } } }, metadata: {} },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ü-\u2028', annotations: { 'q"}': '\\}{' } }, data: { '"metadata"': '{"resourceVersion":"1"}' } },
  // a key whose value does not serialize is left out, as JSON.stringify does
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b', labels: undefined }, data: undefined } as unknown as ApiObject,
];

describe('encodeStoredJson', () => {
  it('stores JSON.stringify of the object and answers JSON.stringify of it with its resourceVersion', () => {
    for (const o of objects) {
      const enc = encodeStoredJson(o);
      expect(new TextDecoder().decode(enc.bytes)).toBe(JSON.stringify(o));
      expect(enc.withResourceVersion('12345')).toBe(JSON.stringify(withRv(o, '12345')));
    }
  });

  it('offers no response text when there is no metadata object or it already has a resourceVersion', () => {
    expect(encodeStoredJson({ apiVersion: 'v1', kind: 'X' } as ApiObject).withResourceVersion('1')).toBeUndefined();
    expect(encodeStoredJson({ apiVersion: 'v1', kind: 'X', metadata: { resourceVersion: '3' } } as ApiObject).withResourceVersion('1')).toBeUndefined();
  });
});
