// The one error-to-Status table (src/registry/status-table.ts): every error
// class raised below the API maps to the code, reason and message the API
// answers with (spec 000 §7); unknown ones stay unmapped (500 in the filter).

import { describe, expect, it } from 'vitest';
import { StatusError, notFound } from '../../src/core/errors.js';
import { StoreUnavailableError } from '../../src/core/store-unavailable.js';
import { ApplyShapeError } from '../../src/machinery/apply/typed.js';
import { PatchError, UnsupportedPatchType } from '../../src/machinery/patch/errors.js';
import { ProtobufError } from '../../src/machinery/protobuf/errors.js';
import { SelectorParseError } from '../../src/machinery/selectors/labels.js';
import { CorruptObjectError } from '../../src/registry/deletion/corrupt.js';
import { statusFor, throwAsStatus } from '../../src/registry/status-table.js';
import { storeErrorToStatus } from '../../src/registry/generic-store.js';
import { StoreClosedError } from '../../src/store/local-store.js';
import { RaftUnavailableError } from '../../src/store/raft-requests.js';
import { InvalidTxnError } from '../../src/store/txn-validation.js';
import { CompactedError, FutureRevisionError } from '../../src/store/types.js';

interface Row {
  name: string;
  error: Error;
  code: number;
  reason: string;
  message: string;
  retryAfter?: string;
}

const ROWS: Row[] = [
  { name: 'SelectorParseError', error: new SelectorParseError('"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"'), code: 400, reason: 'BadRequest', message: '"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"' },
  { name: 'CompactedError', error: new CompactedError(3, 10), code: 410, reason: 'Expired', message: 'The resourceVersion for the provided list is too old.' },
  { name: 'FutureRevisionError', error: new FutureRevisionError(99, 10), code: 504, reason: 'Timeout', message: 'Too large resource version: 99, current: 10', retryAfter: '1' },
  { name: 'ProtobufError Unsupported', error: new ProtobufError('Unsupported', 'protobuf is not supported for Widget: use application/json'), code: 415, reason: 'UnsupportedMediaType', message: 'protobuf is not supported for Widget: use application/json' },
  { name: 'ProtobufError Truncated', error: new ProtobufError('Truncated', 'protobuf data is truncated: x'), code: 400, reason: 'BadRequest', message: 'the protobuf body could not be decoded: protobuf data is truncated: x' },
  { name: 'ProtobufError KindMismatch', error: new ProtobufError('KindMismatch', 'the kind in the data (Pod) does not match the expected kind (ConfigMap)'), code: 400, reason: 'BadRequest', message: 'the protobuf body could not be decoded: the kind in the data (Pod) does not match the expected kind (ConfigMap)' },
  { name: 'UnsupportedPatchType', error: new UnsupportedPatchType('application/strategic-merge-patch+json'), code: 415, reason: 'UnsupportedMediaType', message: 'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml' },
  { name: 'PatchError Malformed', error: new PatchError('Malformed', 'not a list'), code: 400, reason: 'BadRequest', message: 'the patch body could not be decoded: not a list' },
  { name: 'PatchError TestFailed', error: new PatchError('TestFailed', 'test failed at /a'), code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request: test failed at /a' },
  { name: 'PatchError Invalid', error: new PatchError('Invalid', 'no such path /b'), code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request: no such path /b' },
  { name: 'ApplyShapeError', error: new ApplyShapeError('.spec.tags', '.spec.tags: duplicate entries for key "a"'), code: 400, reason: 'BadRequest', message: 'failed to create typed patch object: .spec.tags: duplicate entries for key "a"' },
  { name: 'StoreUnavailableError (certainly not applied)', error: new StoreUnavailableError('no leader', false), code: 503, reason: 'ServiceUnavailable', message: 'no leader', retryAfter: '1' },
  { name: 'RaftUnavailableError (outcome unknown)', error: new RaftUnavailableError('leadership lost', true), code: 504, reason: 'Timeout', message: 'leadership lost', retryAfter: '1' },
];

describe('the error-to-Status table', () => {
  for (const row of ROWS) {
    it(`${row.name} → ${row.code} ${row.reason}`, () => {
      const s = statusFor(row.error);
      expect(s).toBeInstanceOf(StatusError);
      expect(s!.toStatus()).toMatchObject({ kind: 'Status', status: 'Failure', code: row.code, reason: row.reason, message: row.message });
      expect(s!.headers['Retry-After']).toBe(row.retryAfter);
      expect(() => throwAsStatus(row.error)).toThrow(s!.message);
    });
  }

  it('passes Status errors through as they are, corrupt objects included', () => {
    const nf = notFound('configmaps', '', 'a');
    expect(statusFor(nf)).toBe(nf);
    const corrupt = new CorruptObjectError('/registry/configmaps/default/a', new Error('bad bytes'));
    expect(statusFor(corrupt)).toBe(corrupt);
    expect(corrupt.code).toBe(500);
  });

  it('leaves unknown errors unmapped (the Status filter answers 500)', () => {
    for (const e of [new StoreClosedError(), new InvalidTxnError('invalid compare op x'), new Error('boom'), 'text', undefined]) {
      expect(statusFor(e)).toBeUndefined();
      let thrown: unknown = 'nothing thrown';
      try {
        throwAsStatus(e);
      } catch (caught) {
        thrown = caught;
      }
      expect(thrown).toBe(e);
    }
  });

  it('names a future resourceVersion as the client wrote it', () => {
    expect(() => storeErrorToStatus(new FutureRevisionError(12, 10), '012')).toThrow('Too large resource version: 012, current: 10');
    expect(() => storeErrorToStatus(new CompactedError(3, 10), '3')).toThrow('The resourceVersion for the provided list is too old.');
  });
});
