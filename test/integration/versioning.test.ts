// Versioning (spec 000 §6, §9.1): --runtime-config turns APIs off; a
// deprecated endpoint answers with a Warning header and sets
// apiserver_requested_deprecated_apis.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinDefinitions } from '../../src/registry/kinds/index.js';
import { RuntimeConfigError, applyRuntimeConfig, parseRuntimeConfig } from '../../src/server/runtime-config.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('--runtime-config', () => {
  it('parses keys with and without values and rejects unknown APIs', () => {
    const defs = builtinDefinitions('orch.io');
    const off = applyRuntimeConfig(defs, parseRuntimeConfig('coordination.orch.io/v1=false,rbac.authorization.orch.io/v1/roles=false'));
    expect(off.some((d) => d.resource === 'leases')).toBe(false);
    expect(off.some((d) => d.resource === 'roles')).toBe(false);
    expect(off.some((d) => d.resource === 'clusterroles')).toBe(true);
    const back = applyRuntimeConfig(defs, parseRuntimeConfig('api/all=false,v1'));
    expect(back.every((d) => d.group === '')).toBe(true);
    expect(() => applyRuntimeConfig(defs, parseRuntimeConfig('batch/v2alpha1'))).toThrow(RuntimeConfigError);
    expect(() => parseRuntimeConfig('coordination.orch.io/v1=maybe')).toThrow(/true or false/);
  });

  it('a server started with an API turned off does not serve or advertise it', async () => {
    const t = await startTestServer({ runtimeConfig: 'coordination.orch.io/v1=false' });
    try {
      expect((await t.request('GET', '/apis/coordination.orch.io/v1/leases')).status).toBe(404);
      const groups = (await t.request('GET', '/apis')).json<{ groups: { name: string }[] }>().groups.map((g) => g.name);
      expect(groups).not.toContain('coordination.orch.io');
      expect((await t.request('GET', '/api/v1/namespaces')).status).toBe(200);
    } finally {
      await t.stop();
    }
  });

  it('an unknown key refuses to start', async () => {
    await expect(startTestServer({ runtimeConfig: 'nope.example.com/v1=false' })).rejects.toThrow(/not an API this server knows/);
  });
});

describe('deprecated endpoints (spec 000 §6)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
    const lease = t.server.registry.lookup('coordination.orch.io', 'v1', 'leases')!;
    // an old version of a kind, still served and marked deprecated
    t.server.registry.add({
      ...lease,
      version: 'v1beta1',
      deprecated: { deprecatedRelease: '1.19', removedRelease: '1.22', replacement: 'coordination.orch.io/v1 Lease' },
    });
  });
  afterAll(async () => {
    await t?.stop();
  });

  it('answers with a Warning header and counts the use', async () => {
    const r = await t.request('GET', '/apis/coordination.orch.io/v1beta1/namespaces/default/leases');
    expect(r.status).toBe(200);
    expect(r.headers.warning).toBe(
      '299 - "coordination.orch.io/v1beta1 Lease is deprecated in v1.19+, unavailable in v1.22+; use coordination.orch.io/v1 Lease"',
    );
    const current = await t.request('GET', '/apis/coordination.orch.io/v1/namespaces/default/leases');
    expect(current.headers.warning).toBeUndefined();
    const m = (await t.request('GET', '/metrics')).text;
    expect(m).toContain(
      'apiserver_requested_deprecated_apis{group="coordination.orch.io",version="v1beta1",resource="leases",subresource="",removed_release="1.22"} 1',
    );
  });
});
