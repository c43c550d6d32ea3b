import { describe, expect, it } from 'vitest';
import { PatchError } from '../../src/machinery/patch/errors.js';
import { applyJsonPatch, parseJsonPatch } from '../../src/machinery/patch/json-patch.js';
import type { JSONValue } from '../../src/registry/types.js';

function errorOf(f: () => unknown): PatchError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(PatchError);
    return e as PatchError;
  }
  throw new Error('expected a PatchError');
}

describe('applyJsonPatch', () => {
  it('decodes ~0 and ~1 in pointers', () => {
    const doc = { 'a/b': 1, 'm~n': 2 };
    expect(
      applyJsonPatch(doc, [
        { op: 'replace', path: '/a~1b', value: 10 },
        { op: 'replace', path: '/m~0n', value: 20 },
      ]),
    ).toEqual({ 'a/b': 10, 'm~n': 20 });
  });

  it('rejects invalid escapes', () => {
    expect(errorOf(() => applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/a~2', value: 1 }])).reason).toBe('Invalid');
  });

  it('appends with "-" but only for add', () => {
    expect(applyJsonPatch([1], [{ op: 'add', path: '/-', value: 2 }])).toEqual([1, 2]);
    expect(errorOf(() => applyJsonPatch([1], [{ op: 'replace', path: '/-', value: 2 }])).reason).toBe('Invalid');
    expect(errorOf(() => applyJsonPatch([1], [{ op: 'remove', path: '/-' }])).reason).toBe('Invalid');
  });

  it('enforces array bounds and index syntax', () => {
    expect(applyJsonPatch([1, 2], [{ op: 'add', path: '/2', value: 3 }])).toEqual([1, 2, 3]);
    expect(errorOf(() => applyJsonPatch([1, 2], [{ op: 'add', path: '/3', value: 3 }])).message).toContain('out of bounds');
    expect(errorOf(() => applyJsonPatch([1, 2], [{ op: 'replace', path: '/2', value: 3 }])).reason).toBe('Invalid');
    expect(errorOf(() => applyJsonPatch([1, 2], [{ op: 'remove', path: '/01' }])).reason).toBe('Invalid');
    expect(errorOf(() => applyJsonPatch([1, 2], [{ op: 'remove', path: '/+1' }])).reason).toBe('Invalid');
  });

  it('replaces and tests the whole document with the empty pointer', () => {
    expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: [1] }])).toEqual([1]);
    expect(applyJsonPatch({ a: 1 }, [{ op: 'test', path: '', value: { a: 1 } }])).toEqual({ a: 1 });
    expect(errorOf(() => applyJsonPatch({ a: 1 }, [{ op: 'remove', path: '' }])).reason).toBe('Invalid');
  });

  it('refuses to move a location into its own child', () => {
    const e = errorOf(() => applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/c' }]));
    expect(e.reason).toBe('Invalid');
    expect(applyJsonPatch({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a' }])).toEqual({ a: { b: 1 } });
  });

  it('fails atomically and never mutates its inputs', () => {
    const doc: JSONValue = { a: [1, 2], o: { x: 1 } };
    const value = { deep: [1] };
    const ops: JSONValue = [
      { op: 'add', path: '/a/0', value: 0 },
      { op: 'add', path: '/v', value },
      { op: 'test', path: '/o/x', value: 2 },
    ];
    const before = JSON.stringify(doc);
    const e = errorOf(() => applyJsonPatch(doc, ops));
    expect(e.reason).toBe('TestFailed');
    expect(e.message).toContain('operation 2');
    expect(JSON.stringify(doc)).toBe(before);

    const out = applyJsonPatch(doc, [{ op: 'add', path: '/v', value }]) as { v: { deep: number[] } };
    out.v.deep.push(2);
    expect(value.deep).toEqual([1]); // result does not alias the patch value
  });

  it('copies by value', () => {
    const out = applyJsonPatch({ a: { b: [1] } }, [{ op: 'copy', from: '/a', path: '/c' }]) as {
      a: { b: number[] };
      c: { b: number[] };
    };
    out.c.b.push(2);
    expect(out.a.b).toEqual([1]);
  });

  it('tests with JSON equality: member order free, type strict', () => {
    expect(() => applyJsonPatch({ a: { x: 1, y: 2 } }, [{ op: 'test', path: '/a', value: { y: 2, x: 1 } }])).not.toThrow();
    expect(errorOf(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a', value: '1' }])).reason).toBe('TestFailed');
    expect(errorOf(() => applyJsonPatch({ a: [1, 2] }, [{ op: 'test', path: '/a', value: [2, 1] }])).reason).toBe('TestFailed');
  });

  it('handles __proto__ as an ordinary member', () => {
    const out = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('parseJsonPatch', () => {
  it('validates the document shape', () => {
    expect(errorOf(() => parseJsonPatch({ op: 'add' })).message).toContain('array');
    expect(errorOf(() => parseJsonPatch([1])).message).toContain('operation 0');
    expect(errorOf(() => parseJsonPatch([{ path: '/a' }])).message).toContain('"op"');
    expect(errorOf(() => parseJsonPatch([{ op: 'frob', path: '/a' }])).message).toContain('frob');
    expect(errorOf(() => parseJsonPatch([{ op: 'add', path: '/a' }])).message).toContain('"value"');
    expect(errorOf(() => parseJsonPatch([{ op: 'move', path: '/a' }])).message).toContain('"from"');
    expect(errorOf(() => parseJsonPatch([{ op: 'add', path: 3, value: 1 }])).message).toContain('"path"');
    // a null value is a value
    expect(parseJsonPatch([{ op: 'add', path: '/a', value: null }])).toEqual([{ op: 'add', path: '/a', value: null }]);
  });
});
