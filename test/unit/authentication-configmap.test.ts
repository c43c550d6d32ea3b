// extension-apiserver-authentication (src/server/aggregator/authentication-configmap.ts)
// on a real LocalStore with a simulated clock: written at start with kube's
// keys, and an edited or deleted one is brought back at the next resync.

import { describe, expect, it, onTestFinished } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { AUTHENTICATION_CONFIGMAP, AuthenticationConfigMap } from '../../src/server/aggregator/authentication-configmap.js';
import type { ApiObject } from '../../src/registry/types.js';
import { eventually } from '../helpers/eventually.js';
import { openLocalRegistry } from '../helpers/local-registry.js';

const W = { dryRun: false };

describe('extension-apiserver-authentication', () => {
  it("is written with kube's keys and brought back after an edit or a deletion, at the next resync on the clock", async () => {
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const { gs, close } = await openLocalRegistry('k8s.io', 'orch-authcm-', clock);
    onTestFinished(() => close());
    await gs('namespaces').create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-system' } } as ApiObject, W);
    const cms = gs('configmaps');
    const cm = new AuthenticationConfigMap({
      apiDomain: 'k8s.io', configMaps: () => cms, clientCAPem: 'CLIENT CA', clock, resyncMs: 60_000,
      requestHeader: { clientCAPem: 'FRONT PROXY CA', usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'], allowedNames: ['front-proxy-client'] },
    });
    cm.start();
    onTestFinished(() => cm.stop());
    const data = async () => (await cms.get('kube-system', AUTHENTICATION_CONFIGMAP).catch(() => undefined))?.data;
    const want = {
      'client-ca-file': 'CLIENT CA',
      'requestheader-client-ca-file': 'FRONT PROXY CA',
      'requestheader-username-headers': '["X-Remote-User"]',
      'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]',
      'requestheader-allowed-names': '["front-proxy-client"]',
    };
    expect(await eventually(data, 'the ConfigMap')).toEqual(want);
    await cms.guaranteedUpdate('kube-system', AUTHENTICATION_CONFIGMAP, W, (c) => ({ ...c!, data: { 'client-ca-file': 'someone else' } }));
    clock.advance(60_000);
    await eventually(async () => JSON.stringify(await data()) === JSON.stringify(want), 'the edit undone');
    await cms.delete('kube-system', AUTHENTICATION_CONFIGMAP, W);
    clock.advance(60_000);
    expect(await eventually(data, 'made again')).toEqual(want);
  });
});
