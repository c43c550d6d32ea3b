// Kubernetes' e2e "[sig-api-machinery] Discovery" tests
// (test/e2e/apimachinery/discovery.go) on a started orch server with kube's
// group names: present and missing resources as client-go's
// IsResourceEnabled finds them, a custom resource's storageVersionHash, each
// group's preferred version, and the group/version and a resource of each
// group the conformance test lists; plus the aggregated discovery document
// (apidiscovery.k8s.io/v2) listing the same. The "[sig-api-machinery]
// AggregatedDiscovery" tests (aggregated_discovery.go): built-in resources and a
// new CRD's in that document, asked for with the raw Accept header and with
// client-go's list of discovery formats; and "server version" (server_version.go).

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import {
  type Obj, type TestServer, call, createCrdAndWait, deleteCrdAndWait, generateName, randomNameCrd, useKubeServer,
} from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

/** client-go's discovery.IsResourceEnabled: a missing group/version is "not enabled", not an error */
async function isResourceEnabled(group: string, version: string, resource: string): Promise<boolean> {
  const r = await t.request('GET', group === '' ? `/api/${version}` : `/apis/${group}/${version}`);
  if (r.status === 404) return false;
  expect(r.status, r.text).toBe(200);
  return (r.json<Obj>().resources as Obj[]).some((x) => x.name === resource);
}

/** apiserver's discovery.StorageVersionHash: the first 8 bytes of sha256("<group>/<version>/<kind>"), base64 */
const storageVersionHash = (group: string, version: string, kind: string): string =>
  createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');

const CONFORMANCE_GROUPS: [string, string, string][] = [
  ['', 'v1', 'namespaces'],
  ['admissionregistration.k8s.io', 'v1', 'validatingwebhookconfigurations'],
  ['apiextensions.k8s.io', 'v1', 'customresourcedefinitions'],
  ['apiregistration.k8s.io', 'v1', 'apiservices'],
  ['apps', 'v1', 'deployments'],
  ['authentication.k8s.io', 'v1', 'tokenreviews'],
  ['authorization.k8s.io', 'v1', 'selfsubjectaccessreviews'],
  ['autoscaling', 'v1', 'horizontalpodautoscalers'],
  ['autoscaling', 'v2', 'horizontalpodautoscalers'],
  ['batch', 'v1', 'jobs'],
  ['certificates.k8s.io', 'v1', 'certificatesigningrequests'],
  ['coordination.k8s.io', 'v1', 'leases'],
  ['discovery.k8s.io', 'v1', 'endpointslices'],
  ['events.k8s.io', 'v1', 'events'],
  ['networking.k8s.io', 'v1', 'ingresses'],
  ['node.k8s.io', 'v1', 'runtimeclasses'],
  ['policy', 'v1', 'poddisruptionbudgets'],
  ['scheduling.k8s.io', 'v1', 'priorityclasses'],
  ['storage.k8s.io', 'v1', 'csinodes'],
];

describe('Discovery (discovery.go)', () => {
  it('should accurately determine present and missing resources', async () => {
    expect(await isResourceEnabled('', 'v1', 'namespaces')).toBe(true);
    expect(await isResourceEnabled('apps', 'v1', 'deployments')).toBe(true);
    expect(await isResourceEnabled('apps', 'v1', 'please-dont-ever-create-this')).toBe(false);
    expect(await isResourceEnabled('not-these-apps', 'v1', 'deployments')).toBe(false);
    // the 404 of an unknown group/version is a Status client-go reads as NotFound
    const r = await t.request('GET', '/apis/not-these-apps/v1');
    expect(r.json<Obj>()).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
  });

  it('Custom resource should have storage version hash', async () => {
    const crd = randomNameCrd('Cluster');
    crd.spec.versions = [
      { name: 'v1', served: true, storage: false, schema: crd.spec.versions[0].schema },
      { name: 'v2', served: true, storage: true, schema: crd.spec.versions[0].schema },
    ];
    await createCrdAndWait(t, crd);
    const expected = storageVersionHash(crd.spec.group, 'v2', crd.spec.names.kind);
    for (const v of ['v1', 'v2']) {
      const list = await call(t, 'GET', `/apis/${crd.spec.group}/${v}`);
      const res = (list.resources as Obj[]).find((r) => r.name === crd.spec.names.plural);
      expect(res, v).toBeDefined();
      // every served version names the storage version's hash
      expect(res!.storageVersionHash).toBe(expected);
    }
    await deleteCrdAndWait(t, crd.metadata.name);
  });

  it('[Conformance] should validate PreferredVersion for each APIGroup', async () => {
    const list = await call(t, 'GET', '/apis/');
    expect(list.groups.length).toBeGreaterThan(0);
    for (const group of list.groups as Obj[]) {
      if (String(group.name).endsWith('.example.com')) continue;
      const g = await call(t, 'GET', `/apis/${group.name}/`);
      expect(g.versions.length, group.name).toBeGreaterThan(0);
      expect((g.versions as Obj[]).map((v) => v.groupVersion), group.name).toContain(g.preferredVersion.groupVersion);
    }
  });

  it('[Conformance] should locate the groupVersion and a resource within each APIGroup', async () => {
    for (const [group, version, resource] of CONFORMANCE_GROUPS) {
      const path = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
      const list = await call(t, 'GET', path);
      expect(list.groupVersion).toBe(group === '' ? version : `${group}/${version}`);
      expect((list.resources as Obj[]).map((r) => r.name), path).toContain(resource);
    }
  });

  it('aggregated discovery (apidiscovery.k8s.io/v2) lists the same groups, versions and resources', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const fetch = async (path: string): Promise<Obj> => {
      const r = await t.request('GET', path, { headers: { Accept: accept } });
      expect(r.status, r.text).toBe(200);
      expect(String(r.headers['content-type'])).toContain('as=APIGroupDiscoveryList');
      return r.json<Obj>();
    };
    const apis = await fetch('/apis');
    const core = await fetch('/api');
    expect(apis).toMatchObject({ kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2' });
    const all = [...(core.items as Obj[]), ...(apis.items as Obj[])];
    for (const [group, version, resource] of CONFORMANCE_GROUPS) {
      const g = all.find((x) => (x.metadata?.name ?? '') === group);
      expect(g, group).toBeDefined();
      const v = (g!.versions as Obj[]).find((x) => x.version === version);
      expect(v, `${group}/${version}`).toBeDefined();
      expect(v!.freshness ?? 'Current').toBe('Current');
      const res = (v!.resources as Obj[]).find((x) => x.resource === resource);
      expect(res, `${group}/${version} ${resource}`).toBeDefined();
      // kube leaves group and version empty when the kind is the resource's own group/version
      expect(res!.responseKind).toMatchObject({ group: '', version: '' });
      expect(res!.responseKind.kind).toBeTruthy();
      expect(res!.verbs.length).toBeGreaterThan(0);
    }
  });
});

/** kube's isGVRPresentAPIDiscovery: the group (by metadata.name), the version, the resource */
function inAggregated(list: Obj, group: string, version: string, resource: string): boolean {
  return (list.items as Obj[]).some((g) => (g.metadata?.name ?? '') === group
    && (g.versions as Obj[]).some((v) => v.version === version && (v.resources as Obj[]).some((r) => r.resource === resource)));
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
/** what client-go's discovery client sends (AggregatedDiscoveryInterface): v2, v2beta1, then the plain lists */
const CLIENT_GO_ACCEPT = `${AGGREGATED},application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json;q=0.9`;

async function aggregated(path: '/api' | '/apis', accept: string): Promise<Obj> {
  const r = await t.request('GET', path, { headers: { Accept: accept } });
  expect(r.status, r.text).toBe(200);
  // client-go reads the answer as aggregated only when the content type says so
  expect(String(r.headers['content-type'])).toBe(AGGREGATED);
  return r.json<Obj>();
}

/** the e2e's CRD of a random group: testcrds.<group>, namespaced, one version v1 allowing all */
function testCrd(): Obj {
  const group = `${generateName('group')}.example.com`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `testcrds.${group}` },
    spec: {
      group, scope: 'Namespaced', names: { plural: 'testcrds', singular: 'testcrd', kind: 'testcrd', listKind: 'testcrdList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

describe('[sig-api-machinery] AggregatedDiscovery', () => {
  for (const [how, accept] of [['raw aggregated discovery endpoint Accept headers', AGGREGATED], ['aggregated discovery interface', CLIENT_GO_ACCEPT]] as const) {
    it(`should support ${how} [Conformance]`, async () => {
      const [apis, core] = [await aggregated('/apis', accept), await aggregated('/api', accept)];
      for (const [group, version, resource] of CONFORMANCE_GROUPS) {
        expect(inAggregated(group === '' ? core : apis, group, version, resource), `${group}/${version} ${resource}`).toBe(true);
      }
    });
  }

  for (const [how, accept] of [['raw aggregated discovery request for CRDs', AGGREGATED], ['aggregated discovery interface for CRDs', CLIENT_GO_ACCEPT]] as const) {
    it(`should support ${how} [Conformance]`, async () => {
      const crd = testCrd();
      await createCrdAndWait(t, crd);
      try {
        await eventually(async () => inAggregated(await aggregated('/apis', accept), crd.spec.group, 'v1', 'testcrds'), 'the CRD in aggregated discovery');
      } finally {
        await deleteCrdAndWait(t, crd.metadata.name);
      }
    });
  }
});

describe('[sig-api-machinery] server version', () => {
  it('should find the server version [Conformance]', async () => {
    const v = await call(t, 'GET', '/version');
    // the major version is one digit 1-9; the minor, digits once any "+" is cleaned off
    expect(v.major).toMatch(/^[1-9]$/);
    expect(String(v.minor).replace(/[^0-9]+/g, '')).toBe(String(v.minor).match(/[0-9]+/)?.[0]);
    expect(v.gitVersion).toMatch(/^v[0-9]+\.[0-9]+\.[0-9]+/);
  });
});
