// RFC 7386 vectors (shared/conformance/merge-patch/rfc7386.json, beside the clone).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyMergePatch, createMergePatch } from '../../src/machinery/patch/merge-patch.js';
import type { JSONValue } from '../../src/registry/types.js';
import { conformancePath } from '../helpers/shared-dir.js';

interface Vector {
  target: JSONValue;
  patch: JSONValue;
  result: JSONValue;
}

const vectors = JSON.parse(readFileSync(conformancePath('merge-patch', 'rfc7386.json'), 'utf8')) as Vector[];
let executed = 0;

describe('RFC 7386 vectors', () => {
  vectors.forEach((v, i) => {
    it(`#${i} ${JSON.stringify(v.patch)}`, () => {
      executed++;
      const before = JSON.stringify([v.target, v.patch]);
      expect(applyMergePatch(v.target, v.patch)).toEqual(v.result);
      expect(JSON.stringify([v.target, v.patch])).toBe(before);
    });
  });

  it('ran every vector', () => {
    expect(vectors.length).toBe(16);
    expect(executed).toBe(vectors.length);
  });
});

describe('createMergePatch', () => {
  it('diffs objects with nulls for removed members and nested patches', () => {
    const a = { keep: 1, gone: 2, nested: { x: 1, y: 2 }, list: [1, 2] };
    const b = { keep: 1, nested: { x: 1, z: 3 }, list: [2], added: true };
    const p = createMergePatch(a, b);
    expect(p).toEqual({ gone: null, nested: { y: null, z: 3 }, list: [2], added: true });
    expect(applyMergePatch(a, p)).toEqual(b);
  });

  it('gives an empty patch for equal documents and the document itself for non-objects', () => {
    expect(createMergePatch({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual({});
    expect(createMergePatch({ a: 1 }, [1])).toEqual([1]);
  });

  it('does not alias its inputs', () => {
    const a = { o: { x: 1 } };
    const out = applyMergePatch(a, { y: 1 }) as { o: { x: number } };
    out.o.x = 5;
    expect(a.o.x).toBe(1);
  });

  it('treats __proto__ as an ordinary member', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as JSONValue;
    const out = applyMergePatch({}, patch) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
