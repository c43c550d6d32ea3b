// CustomResourceDefinitions in a 3-member cluster (issue #16): a CRD created
// on one member is served by every member (each registers it from its own
// applied feed, not from the create handler), objects written through any
// member are read through every other, a member restarted later serves the
// kind from its stored state, and deleting the CRD stops it everywhere.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServiceAccountKeys } from '../../src/auth/authn/sa-keys.js';
import { ensurePki } from '../../src/server/pki.js';
import { type RunningServer, type ServerOptions, startServer } from '../../src/server/server.js';
import { CRDS, type Obj, establishedOn, operatorCrd } from '../helpers/crds.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest } from '../helpers/server.js';

const WA = '/apis/apps.example.com/v1/namespaces/default/webapps';
const members: (RunningServer | undefined)[] = [];
const options: ServerOptions[] = [];
let root = '';

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'orch-crd-cluster-'));
  const names = ['m1', 'm2', 'm3'];
  const peers = await Promise.all(names.map(() => freePort()));
  const initialCluster = Object.fromEntries(names.map((n, i) => [n, `127.0.0.1:${peers[i]}`]));
  await ensurePki(join(root, 'pki'), { hosts: ['localhost', '127.0.0.1', '::1'] });
  loadServiceAccountKeys({ defaultKeyPath: join(root, 'pki', 'sa.key') });
  for (const name of names) {
    options.push({ dataDir: join(root, name), pkiDir: join(root, 'pki'), bindAddress: '127.0.0.1', securePort: 0, apiDomain: 'orch.io', log: () => {}, cluster: { name, initialCluster, tickMs: 20 } });
  }
  members.push(...(await Promise.all(options.map((o) => startServer(o)))));
}, 120_000);

afterAll(async () => {
  await Promise.all(members.map((m) => m?.shutdown()));
  if (root) await rm(root, { recursive: true, force: true });
});

const webapp = (name: string): Obj => ({ apiVersion: 'apps.example.com/v1', kind: 'WebApp', metadata: { name }, spec: { image: 'nginx:1' } });

describe('a CRD in a 3-member cluster', () => {
  it('is served on every member, objects flow between members, and deletion stops it everywhere', async () => {
    const [m1, m2, m3] = members as RunningServer[];
    const c = await rawRequest(m2!, 'POST', CRDS, { body: operatorCrd() });
    expect(c.status).toBe(201);
    // Established is written by the leader, whichever member that is; every member sees it
    for (const m of [m1!, m2!, m3!]) await eventually(() => establishedOn(m, 'webapps.apps.example.com'), 'Established everywhere');
    // every member serves the kind: create through each, read through the next
    for (const [i, m] of [m1!, m2!, m3!].entries()) {
      await eventually(async () => (await rawRequest(m, 'GET', WA)).status === 200, `member ${i + 1} serves webapps`);
      const r = await rawRequest(m, 'POST', WA, { body: webapp(`from-m${i + 1}`) });
      expect(r.status).toBe(201);
      expect(r.json<Obj>().spec.replicas).toBe(1); // the schema's default, on every member
    }
    for (const m of [m1!, m2!, m3!]) {
      const list = (await rawRequest(m, 'GET', WA)).json<Obj>();
      expect(list.items.map((o: Obj) => o.metadata.name).sort()).toEqual(['from-m1', 'from-m2', 'from-m3']);
      const d = (await rawRequest(m, 'GET', '/apis/apps.example.com/v1')).json<Obj>();
      expect(d.resources.map((r: Obj) => r.name)).toContain('webapps');
    }
    // a CEL rule is enforced on every member
    for (const m of [m1!, m3!]) {
      const bad = await rawRequest(m, 'POST', WA, { body: { ...webapp('bad'), spec: { image: 'x', replicas: 11 } } });
      expect(bad.status).toBe(422);
    }

    // a restarted member serves the kind from what it stores
    await members[2]!.shutdown();
    members[2] = await startServer(options[2]!);
    const r3 = await rawRequest(members[2]!, 'GET', `${WA}/from-m1`);
    expect(r3.status).toBe(200);

    // deleting through one member removes objects and the kind on all
    expect((await rawRequest(m1!, 'DELETE', `${CRDS}/webapps.apps.example.com`)).status).toBe(200);
    for (const m of [m1!, m2!, members[2]!]) {
      await eventually(async () => (await rawRequest(m, 'GET', `${CRDS}/webapps.apps.example.com`)).status === 404, 'CRD gone everywhere');
      expect((await rawRequest(m, 'GET', WA)).status).toBe(404);
      expect(m.store.range({ key: '/registry/apps.example.com/', end: '/registry/apps.example.com0' }).count).toBe(0);
    }
  }, 120_000);
});
