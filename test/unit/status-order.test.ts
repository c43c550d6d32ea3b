// Status bodies as kube-apiserver writes them, key for key (issue #11: some
// client test suites compare the text).
import { describe, expect, it } from 'vitest';
import { internalError, invalid, notFound } from '../../src/core/errors.js';

describe('Status key order', () => {
  it('is kind, apiVersion, metadata, status, message, reason, details, code', () => {
    expect(JSON.stringify(notFound('configmaps', '', 'x').toStatus())).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}',
    );
    const s = invalid('ConfigMap', '', 'y', [{ field: 'data', message: 'bad', type: 'FieldValueInvalid' }]).toStatus();
    expect(Object.keys(s)).toEqual(['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']);
  });

  it('carries an internal error\'s cause in details.causes, as kube\'s NewInternalError', () => {
    expect(JSON.stringify(internalError('range is full').toStatus())).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Internal error occurred: range is full","reason":"InternalError","details":{"causes":[{"message":"range is full"}]},"code":500}',
    );
  });
});
