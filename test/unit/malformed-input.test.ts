// The parsing of hostile input below the handlers, as kube-apiserver 1.32 reads it:
// request heads uWS would hold without a word, query integers (strconv.ParseInt),
// Content-Type parameters (mime.ParseMediaType), DeleteOptions body types (Go's json
// decoder), the protobuf envelope and integers beyond their Go type.

import { describe, expect, it } from 'vitest';
import { parseRequestHead } from '../../src/gateway/h1-request-head.js';
import { intValue } from '../../src/endpoints/query-params.js';
import { mediaParamsValid } from '../../src/endpoints/handlers/common.js';
import { deleteOptionsTypeError } from '../../src/registry/deletion/delete-options-types.js';
import { decodeEnvelope } from '../../src/machinery/protobuf/envelope.js';
import { validateAgainstSchema } from '../../src/machinery/schema/validate.js';
import type { StatusError } from '../../src/core/errors.js';
import type { Schema } from '../../src/machinery/schema/types.js';

const parse = (head: string) => {
  const b = Buffer.from(head + '\r\n\r\n', 'latin1');
  return parseRequestHead(b, b.indexOf('\r\n\r\n'));
};

describe('request heads uWS cannot answer', () => {
  it('reads an absolute-form target as its path and query (RFC 9112 §3.2.2, as Go does)', () => {
    expect(parse('GET https://127.0.0.1:6443/api/v1/namespaces?limit=1 HTTP/1.1\r\nHost: x')).toMatchObject({ path: '/api/v1/namespaces', query: 'limit=1' });
    expect(parse('GET http://x HTTP/1.1')).toMatchObject({ path: '/', query: '' });
  });

  it('answers OPTIONS * with an empty 200 and refuses other targets and control characters', () => {
    expect(parse('OPTIONS * HTTP/1.1\r\nHost: x')).toEqual({ reject: { code: 200, message: '' } });
    expect(parse('GET 127.0.0.1:6443 HTTP/1.1')).toMatchObject({ reject: { code: 400 } });
    expect(parse('GET x/y HTTP/1.1')).toMatchObject({ reject: { code: 400 } });
    expect(parse('GET /x HTTP/1.1\r\nX-A: a\u0000b')).toMatchObject({ reject: { code: 400 } });
    expect(parse('\u0000\u0001 garbage')).toMatchObject({ reject: { code: 400 } });
    expect(parse('GET /x HTTP/1.1\r\nX-A: a\u007fb')).toMatchObject({ reject: { code: 400 } });
    expect(parse('PROPFIND /x HTTP/1.1')).toEqual({ reject: { code: 405, message: 'the server does not allow this method on the requested resource' } });
  });
});

describe('query integers (kube: strconv.ParseInt, 400 with its text)', () => {
  const err = (v: string) => {
    try {
      intValue(v);
    } catch (e) {
      const s = e as StatusError;
      return { code: s.code, reason: s.reason, message: s.message };
    }
    return undefined;
  };
  it('reads signed decimal int64s', () => {
    expect(intValue(undefined)).toBeUndefined();
    expect(intValue('+5')).toBe(5);
    expect(intValue('-1')).toBe(-1);
    expect(intValue('9223372036854775807')).toBe(2 ** 63);
  });
  it('refuses an empty, malformed or out-of-range value', () => {
    expect(err('')).toMatchObject({ code: 400, reason: 'BadRequest', message: 'strconv.ParseInt: parsing "": invalid syntax' });
    expect(err('1e9')).toMatchObject({ message: 'strconv.ParseInt: parsing "1e9": invalid syntax' });
    expect(err('9223372036854775808')).toMatchObject({ message: 'strconv.ParseInt: parsing "9223372036854775808": value out of range' });
  });
});

describe('Content-Type parameters (mime.ParseMediaType)', () => {
  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['application/json;charset="utf 8";', true],
    ['application/json; =x', false],
    ['application/json; a', false],
    ['application/json; a=1; A=2', false],
  ])('%s: %s', (ct, ok) => expect(mediaParamsValid(ct)).toBe(ok));
});

describe('DeleteOptions body types (Go json decoding into metav1.DeleteOptions)', () => {
  it('names the first field of the wrong type as Go does', () => {
    expect(deleteOptionsTypeError({ gracePeriodSeconds: 'x' })).toBe('json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64');
    expect(deleteOptionsTypeError({ gracePeriodSeconds: 1.5 })).toBe('json: cannot unmarshal number 1.5 into Go struct field DeleteOptions.gracePeriodSeconds of type int64');
    expect(deleteOptionsTypeError({ preconditions: { uid: 5 } })).toBe('json: cannot unmarshal number into Go struct field Preconditions.preconditions.uid of type types.UID');
    expect(deleteOptionsTypeError({ dryRun: 'All' })).toBe('json: cannot unmarshal string into Go struct field DeleteOptions.dryRun of type []string');
    expect(deleteOptionsTypeError({ orphanDependents: 'true' })).toBe('json: cannot unmarshal string into Go struct field DeleteOptions.orphanDependents of type bool');
    expect(deleteOptionsTypeError({ propagationPolicy: ['Orphan'] })).toBe('json: cannot unmarshal array into Go struct field DeleteOptions.propagationPolicy of type v1.DeletionPropagation');
  });
  it('takes null and the right types', () => {
    expect(deleteOptionsTypeError({ gracePeriodSeconds: 0, preconditions: { uid: 'u', resourceVersion: null }, dryRun: ['All'], orphanDependents: null, unknown: 5 })).toBeUndefined();
  });
});

describe('decoding limits', () => {
  it('refuses a protobuf envelope of only its prefix, as kube ("empty body")', () => {
    expect(() => decodeEnvelope(Uint8Array.from([0x6b, 0x38, 0x73, 0x00]))).toThrow('empty body');
  });

  it('refuses an integer beyond its Go type for built-in kinds only', () => {
    const schema: Schema = { type: 'object', properties: { r: { type: 'integer', format: 'int32' }, g: { type: 'integer', format: 'int64' } } };
    const errs = (v: object, goIntRanges: boolean) => validateAgainstSchema(structuredClone(v), schema, {}, { goIntRanges }).errors;
    expect(errs({ r: 2 ** 31 - 1, g: 2 ** 63 }, true)).toEqual([]);
    expect(errs({ r: 2 ** 31 }, true)).toEqual([{ field: 'r', type: 'FieldValueTypeInvalid', message: 'Invalid value: 2147483648: r in body must be of type int32: "2147483648"' }]);
    expect(errs({ g: 2 ** 64 }, true)[0]).toMatchObject({ field: 'g', type: 'FieldValueTypeInvalid' });
    expect(errs({ r: 2 ** 40, g: 2 ** 64 }, false)).toEqual([]);
  });
});
