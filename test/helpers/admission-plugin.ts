// Running one built-in admission plugin as the write path does (its mutating
// step, then its validating step on what that returned), and catching the 403
// a plugin refuses with. Shared by the plugins' unit tests.
import { expect } from 'vitest';
import { StatusError } from '../../src/core/errors.js';
import type { AdmissionCall, WriteHooks } from '../../src/registry/write-options.js';

type Obj = Record<string, unknown>;

/** both steps; the pod's spec as admitted */
export async function admitPod(h: Required<Pick<WriteHooks, 'mutate' | 'validateAdmission'>>, c: AdmissionCall): Promise<Obj> {
  const out = (await h.mutate(c))!;
  await h.validateAdmission({ ...c, object: out });
  return (out as unknown as { spec: Obj }).spec;
}

/** the promise's rejection, asserted to be a 403 Forbidden StatusError */
export async function forbiddenBy(p: Promise<unknown>): Promise<StatusError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(StatusError);
  expect((e as StatusError).code).toBe(403);
  expect((e as StatusError).reason).toBe('Forbidden');
  return e as StatusError;
}
