import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/machinery/schema/compile.js';
import { converterMessage, goFormat } from '../../src/machinery/schema/go-decode.js';

describe('goFormat (fmt %+v of a decoded patch)', () => {
  it('prints maps with sorted keys, slices space-separated, nil and floats as Go does', () => {
    expect(goFormat({ spec: { b: [1, 'x', true], a: null }, metadata: { labels: 'invalid' } })).toBe('map[metadata:map[labels:invalid] spec:map[a:<nil> b:[1 x true]]]');
    expect(goFormat(1.5)).toBe('1.5');
    expect(goFormat(1234567.5)).toBe('1.2345675e+06');
    expect(goFormat(0.00001)).toBe('1e-05');
  });
});

describe('converterMessage (runtime.DefaultUnstructuredConverter errors)', () => {
  const c = (s: object) => compileSchema(s as never, {});
  it('names the Go kind it could not restore from', () => {
    expect(converterMessage(c({ type: 'object', additionalProperties: { type: 'string' } }), 'x')).toBe('cannot restore map from string');
    expect(converterMessage(c({ type: 'object', properties: { a: { type: 'string' } } }), [1])).toBe('cannot restore struct from: slice');
    expect(converterMessage(c({ type: 'array', items: { type: 'string' } }), 5)).toBe('cannot restore slice from int64');
    expect(converterMessage(c({ type: 'string' }), 5)).toBe('cannot convert int64 to string');
    expect(converterMessage(c({ type: 'string' }), true)).toBe('unrecognized type: string');
    expect(converterMessage(c({ type: 'integer', format: 'int32' }), 'x')).toBe('unrecognized type: int32');
    expect(converterMessage(c({ type: 'integer', format: 'int64' }), 1.5)).toBe('cannot convert float64 to int64');
    expect(converterMessage(c({ type: 'boolean' }), 'x')).toBe('unrecognized type: bool');
  });
});
