// The certificate controllers on a real LocalStore with a simulated clock:
// signing honours approval, failure and expirationSeconds; the approver asks
// the authorizer as a SubjectAccessReview would; the cleaner deletes requests
// at kube's ages (no sleeps: the clock moves only when told).

import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Authorizer, RequestAttributes } from '../../src/auth/authz/types.js';
import { ManualClock } from '../../src/core/clock.js';
import { StatusError } from '../../src/core/errors.js';
import { createCertificateRequest } from '../../src/core/x509.js';
import { CsrApprovingController } from '../../src/controllers/certificates/csrapproving.js';
import { CsrCleanerController } from '../../src/controllers/certificates/csrcleaner.js';
import { CsrSigningController } from '../../src/controllers/certificates/csrsigning.js';
import type { GenericStore } from '../../src/registry/generic-store.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';
import { ensurePki } from '../../src/server/pki.js';
import { openLocalRegistry, settleControllers } from '../helpers/local-registry.js';

const D = 'orch.io';
const T0 = Date.parse('2026-03-01T00:00:00Z');
const HOUR = 3600_000;
const KUBELET = 'orch.io/orch-apiserver-client-kubelet';
const CLIENT = 'orch.io/orch-apiserver-client';
type Obj = Record<string, JSONValue>;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.reverse()) await f();
  cleanup = [];
});

interface Env {
  clock: ManualClock;
  csrs: GenericStore;
  asked: RequestAttributes[];
  settle(): Promise<void>;
  advance(ms: number): Promise<void>;
}

/** the three controllers; `allow` decides the approver's SubjectAccessReviews */
async function env(allow: (a: RequestAttributes) => boolean = () => false): Promise<Env> {
  const clock = new ManualClock(T0);
  const { store, gs, close } = await openLocalRegistry(D, 'orch-csr-', clock);
  const pkiDir = await mkdtemp(join(tmpdir(), 'orch-csr-pki-'));
  const pki = await ensurePki(pkiDir, { now: T0 });
  const csrs = () => gs('certificatesigningrequests', `certificates.${D}`);
  const asked: RequestAttributes[] = [];
  const authorizer: Authorizer = {
    authorize: async (a) => {
      asked.push(a);
      return allow(a) ? { decision: 'allow' } : { decision: 'noOpinion' };
    },
  };
  const controllers = [
    new CsrSigningController({ store, csrs, apiDomain: D, ca: pki.ca, signingDurationMs: 30 * 24 * HOUR, clock }),
    new CsrApprovingController({ store, csrs, apiDomain: D, authorizer, clock }),
    new CsrCleanerController({ store, csrs, clock }),
  ];
  for (const c of controllers) c.start();
  cleanup.push(async () => {
    for (const c of controllers) c.stop();
    await close();
    await rm(pkiDir, { recursive: true, force: true });
  });
  // signing is real crypto work off the store's loop: settle until nothing is queued twice in a row
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      await settleControllers(controllers);
      await new Promise((r) => setTimeout(r, 20));
    }
    await settleControllers(controllers);
  };
  return { clock, csrs: csrs(), asked, settle, async advance(ms) { clock.advance(ms); await settle(); } };
}

async function create(e: Env, name: string, signerName: string, subject: { cn: string; o?: string[] }, opts: { usages?: string[]; expirationSeconds?: number; user?: string; groups?: string[] } = {}): Promise<void> {
  const { csrPem } = await createCertificateRequest({ commonName: subject.cn, organizations: subject.o });
  await e.csrs.create('', {
    apiVersion: `certificates.${D}/v1`, kind: 'CertificateSigningRequest', metadata: { name },
    spec: { request: Buffer.from(csrPem).toString('base64'), signerName, usages: opts.usages ?? ['digital signature', 'client auth'], ...(opts.expirationSeconds ? { expirationSeconds: opts.expirationSeconds } : {}) },
  }, { dryRun: false, user: { username: opts.user ?? 'admin', groups: opts.groups ?? ['system:authenticated'] } });
  await e.settle();
}

const get = async (e: Env, name: string): Promise<ApiObject | undefined> => {
  try {
    return await e.csrs.get('', name);
  } catch (err) {
    if (err instanceof StatusError && err.code === 404) return undefined;
    throw err;
  }
};
const st = async (e: Env, name: string): Promise<Obj> => ((await get(e, name))?.status ?? {}) as Obj;

/** what `kubectl certificate approve|deny` writes (to /approval), stamped with the simulated clock */
async function decide(e: Env, name: string, type: 'Approved' | 'Denied'): Promise<void> {
  await e.csrs.guaranteedUpdate('', name, { dryRun: false, subresource: 'approval' }, (cur) => ({
    ...cur!, status: { conditions: [{ type, status: 'True', reason: 'Test', lastUpdateTime: new Date(e.clock.now()).toISOString().replace('.000Z', 'Z') }] },
  }));
  await e.settle();
}

describe('csrsigning', () => {
  it('signs only once approved, with the requested duration; denied and other signers are not signed', async () => {
    const e = await env();
    await create(e, 'a', CLIENT, { cn: 'alice' }, { usages: ['client auth'], expirationSeconds: 2 * HOUR / 1000 });
    await create(e, 'd', CLIENT, { cn: 'dave' }, { usages: ['client auth'] });
    await create(e, 'x', 'example.com/other', { cn: 'xavier' }, { usages: ['client auth'] });
    expect((await st(e, 'a')).certificate).toBeUndefined();
    await decide(e, 'a', 'Approved');
    await decide(e, 'd', 'Denied');
    await decide(e, 'x', 'Approved');
    const cert = new X509Certificate(Buffer.from(String((await st(e, 'a')).certificate), 'base64'));
    expect(Date.parse(cert.validFrom)).toBe(T0 - 5 * 60_000);
    expect(Date.parse(cert.validTo)).toBe(T0 + 2 * HOUR);
    expect((await st(e, 'd')).certificate).toBeUndefined();
    expect((await st(e, 'x')).certificate).toBeUndefined();
  });

  it('caps a duration at --cluster-signing-duration', async () => {
    const e = await env();
    await create(e, 'long', CLIENT, { cn: 'l' }, { usages: ['client auth'], expirationSeconds: 365 * 86400 });
    await decide(e, 'long', 'Approved');
    const cert = new X509Certificate(Buffer.from(String((await st(e, 'long')).certificate), 'base64'));
    expect(Date.parse(cert.validTo)).toBe(T0 + 30 * 24 * HOUR - 5 * 60_000);
  });
});

describe('csrapproving', () => {
  it('asks for nodeclient as the requester and approves when allowed', async () => {
    const e = await env((a) => a.subresource === 'nodeclient' && a.user.groups.includes('system:bootstrappers'));
    await create(e, 'n1', KUBELET, { cn: 'system:node:n1', o: ['system:nodes'] }, { user: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:authenticated'] });
    const conds = (await st(e, 'n1')).conditions as Obj[];
    expect(conds).toEqual([expect.objectContaining({ type: 'Approved', reason: 'AutoApproved' })]);
    expect((await st(e, 'n1')).certificate).toBeDefined();
    expect(e.asked.map((a) => [a.user.username, a.verb, a.apiGroup, a.resource, a.subresource])).toEqual([
      ['system:bootstrap:abcdef', 'create', 'certificates.orch.io', 'certificatesigningrequests', 'nodeclient'],
    ]);
  });

  it('leaves pending what is not a node client request or is not allowed', async () => {
    const e = await env((a) => a.user.username !== 'mallory');
    await create(e, 'wrong-o', KUBELET, { cn: 'system:node:n1', o: ['ops'] }, { user: 'system:bootstrap:abcdef' });
    await create(e, 'client', CLIENT, { cn: 'system:node:n1', o: ['system:nodes'] }, { user: 'system:bootstrap:abcdef' });
    await create(e, 'mallory', KUBELET, { cn: 'system:node:n1', o: ['system:nodes'] }, { user: 'mallory' });
    for (const n of ['wrong-o', 'client', 'mallory']) expect((await st(e, n)).conditions).toBeUndefined();
    // only mallory's request is a node client one; her name is not its subject, so only nodeclient is asked
    expect(e.asked.map((a) => a.subresource)).toEqual(['nodeclient']);
  });
});

describe('csrcleaner', () => {
  it('deletes a pending request after 24 h, denied and failed ones after 1 h', async () => {
    const e = await env();
    await create(e, 'pending', CLIENT, { cn: 'p' }, { usages: ['client auth'] });
    await create(e, 'denied', CLIENT, { cn: 'd' }, { usages: ['client auth'] });
    await create(e, 'failed', KUBELET, { cn: 'not-a-node' });
    await decide(e, 'denied', 'Denied');
    await decide(e, 'failed', 'Approved');
    expect(((await st(e, 'failed')).conditions as Obj[]).map((c) => c.type)).toEqual(['Approved', 'Failed']); // the signer appends Failed; kube's status strategy keeps the stored approval where it stands
    await e.advance(HOUR - 1000);
    expect(await get(e, 'denied')).toBeDefined();
    expect(await get(e, 'failed')).toBeDefined();
    await e.advance(2000);
    expect(await get(e, 'denied')).toBeUndefined();
    expect(await get(e, 'failed')).toBeUndefined();
    await e.advance(23 * HOUR - 2000);
    expect(await get(e, 'pending')).toBeDefined();
    await e.advance(2000);
    expect(await get(e, 'pending')).toBeUndefined();
  });

  it('deletes an issued request an hour after approval, or when its certificate expires if sooner; approved but unissued stays', async () => {
    const e = await env();
    await create(e, 'issued', CLIENT, { cn: 'i' }, { usages: ['client auth'] });
    await create(e, 'short', CLIENT, { cn: 's' }, { usages: ['client auth'], expirationSeconds: 600 });
    await create(e, 'elsewhere', 'example.com/other', { cn: 'o' }, { usages: ['client auth'] });
    for (const n of ['issued', 'short', 'elsewhere']) await decide(e, n, 'Approved');
    expect((await st(e, 'short')).certificate).toBeDefined();
    await e.advance(600_000 - 1000);
    expect(await get(e, 'short')).toBeDefined();
    await e.advance(2000);
    expect(await get(e, 'short')).toBeUndefined();
    expect(await get(e, 'issued')).toBeDefined();
    await e.advance(HOUR - 600_000);
    expect(await get(e, 'issued')).toBeUndefined();
    await e.advance(48 * HOUR);
    expect(await get(e, 'elsewhere')).toBeDefined();
  });
});
