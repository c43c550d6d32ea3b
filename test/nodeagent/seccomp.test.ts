// Seccomp (spec 002 §2.5): the API validates securityContext.seccompProfile;
// the agent resolves the effective profile and validates OCI profile files.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { effectiveProfile, resolveSeccomp, validateProfile } from '../../src/nodeagent/seccomp.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('effective profile', () => {
  it('container overrides the pod; unset inherits', () => {
    expect(effectiveProfile({ type: 'RuntimeDefault' }, { type: 'Unconfined' })).toEqual({ type: 'Unconfined' });
    expect(effectiveProfile({ type: 'Localhost', localhostProfile: 'a.json' }, undefined)).toEqual({ type: 'Localhost', localhostProfile: 'a.json' });
    expect(effectiveProfile(undefined, {})).toBeUndefined();
  });
});

describe('OCI profile validation', () => {
  it('accepts the documented fields and actions', () => {
    expect(validateProfile({ defaultAction: 'SCMP_ACT_ERRNO', defaultErrnoRet: 1, architectures: ['SCMP_ARCH_X86_64'], syscalls: [{ names: ['read', 'write'], action: 'SCMP_ACT_ALLOW' }, { names: ['personality'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 8, op: 'SCMP_CMP_EQ' }] }, { names: ['ptrace'], action: 'SCMP_ACT_NOTIFY' }, { names: ['kill'], action: 'SCMP_ACT_TRAP', errnoRet: 0 }] })).toBeUndefined();
  });
  it('refuses bad profiles with the reason', () => {
    expect(validateProfile({ defaultAction: 'SCMP_ACT_NOTIFY' })).toMatch(/defaultAction cannot be SCMP_ACT_NOTIFY/);
    expect(validateProfile({ defaultAction: 'SECCOMP_RET_USER_NOTIF' })).toMatch(/cannot be/);
    expect(validateProfile({ defaultAction: 'ALLOW' })).toMatch(/defaultAction must be one of/);
    expect(validateProfile({ defaultAction: 'SCMP_ACT_LOG', defaultErrnoRet: -1 })).toMatch(/defaultErrnoRet/);
    expect(validateProfile({ defaultAction: 'SCMP_ACT_LOG', syscalls: [{ names: [], action: 'SCMP_ACT_ALLOW' }] })).toMatch(/syscalls\[0\]\.names/);
    expect(validateProfile({ defaultAction: 'SCMP_ACT_LOG', syscalls: [{ names: ['x'], action: 'SCMP_ACT_NOPE' }] })).toMatch(/syscalls\[0\]\.action/);
    expect(validateProfile({ defaultAction: 'SCMP_ACT_LOG', syscalls: [{ names: ['x'], action: 'SCMP_ACT_ALLOW', args: [{ index: 9, value: 1, op: 'SCMP_CMP_EQ' }] }] })).toMatch(/args\[0\]\.index/);
    expect(validateProfile({ defaultAction: 'SCMP_ACT_LOG', extra: 1 })).toMatch(/unknown field "extra"/);
  });
  it('loads Localhost profiles from <root-dir>/seccomp and names the file when missing or invalid', async () => {
    const root = await mkdtemp(join(tmpdir(), 'orch-sec-'));
    try {
      await mkdir(join(root, 'seccomp'));
      await writeFile(join(root, 'seccomp', 'ok.json'), '{"defaultAction":"SCMP_ACT_ALLOW"}');
      await writeFile(join(root, 'seccomp', 'bad.json'), '{"defaultAction":"SCMP_ACT_NOTIFY"}');
      expect(await resolveSeccomp(root, { type: 'Localhost', localhostProfile: 'ok.json' })).toEqual({ profileType: 'Localhost', localhostRef: join(root, 'seccomp', 'ok.json'), profileJson: '{"defaultAction":"SCMP_ACT_ALLOW"}' });
      await expect(resolveSeccomp(root, { type: 'Localhost', localhostProfile: 'gone.json' })).rejects.toThrow(`failed to load seccomp profile ${join(root, 'seccomp', 'gone.json')}: no such file`);
      await expect(resolveSeccomp(root, { type: 'Localhost', localhostProfile: 'bad.json' })).rejects.toThrow(`invalid seccomp profile ${join(root, 'seccomp', 'bad.json')}: defaultAction cannot be`);
      await expect(resolveSeccomp(root, { type: 'Localhost', localhostProfile: '../etc/passwd' })).rejects.toThrow(/must be a file under/);
      expect(await resolveSeccomp(root, { type: 'RuntimeDefault' })).toEqual({ profileType: 'RuntimeDefault' });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('API validation of securityContext.seccompProfile', () => {
  let ts: TestServer;
  beforeAll(async () => {
    ts = await startTestServer();
  });
  afterAll(() => ts.stop());
  const pod = (podSc: object | undefined, cSc: object | undefined) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 's-' },
    spec: { ...(podSc ? { securityContext: { seccompProfile: podSc } } : {}), containers: [{ name: 'c', image: 'x', ...(cSc ? { securityContext: { seccompProfile: cSc } } : {}) }] },
  });
  const create = (body: object) => ts.request('POST', '/api/v1/namespaces/default/pods', { body });
  it('accepts the three types at pod and container level', async () => {
    expect((await create(pod({ type: 'RuntimeDefault' }, { type: 'Localhost', localhostProfile: 'profiles/a.json' }))).status).toBe(201);
    expect((await create(pod({ type: 'Unconfined' }, undefined))).status).toBe(201);
  });
  it('refuses a missing or misplaced localhostProfile and unknown types', async () => {
    const r1 = await create(pod({ type: 'Localhost' }, undefined));
    expect(r1.status).toBe(422);
    expect(r1.text).toContain('spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost');
    const r2 = await create(pod(undefined, { type: 'RuntimeDefault', localhostProfile: 'a.json' }));
    expect(r2.status).toBe(422);
    expect(r2.text).toContain('spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: \\"a.json\\": can only be set when seccomp type is Localhost');
    const r3 = await create(pod(undefined, { type: 'Localhost', localhostProfile: '../../etc/x' }));
    expect(r3.status).toBe(422);
    const r4 = await create(pod({ type: 'Strict' }, undefined));
    expect([400, 422]).toContain(r4.status);
    expect(r4.text).toContain('Strict');
  });
});
