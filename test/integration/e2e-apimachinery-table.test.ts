// Kubernetes' e2e "[sig-api-machinery] Servers with support for Table
// transformation" tests (test/e2e/apimachinery/table_conversion.go) on a
// started orch server with kube's group names: a pod and the nodes as Tables
// (meta.k8s.io v1 and v1beta1), Tables of a list in chunks, and 406 for a
// kind that has no metadata to print (a SelfSubjectAccessReview); plus the
// CRD side of Tables: a custom resource's additionalPrinterColumns.

import { describe, expect, it } from 'vitest';
import {
  type Obj, type TestServer, TABLE_V1, TABLE_V1BETA1, call, createCrdAndWait, crPath, newNamespace, randomNameCrd, useKubeServer,
} from '../helpers/kube-e2e.js';

let t: TestServer;
useKubeServer((s) => (t = s));

async function table(path: string, accept: string): Promise<Obj> {
  const r = await t.request('GET', path, { headers: { Accept: accept } });
  expect(r.status, r.text).toBe(200);
  const tbl = r.json<Obj>();
  expect(tbl.kind).toBe('Table');
  return tbl;
}

/** printers.PrintTable with a tabwriter: the upper-cased column names, then the cells, padded */
function printTable(tbl: Obj): string {
  const cols = (tbl.columnDefinitions as Obj[]).filter((c) => !c.priority);
  const idx = cols.map((c) => (tbl.columnDefinitions as Obj[]).indexOf(c));
  const rows: string[][] = [cols.map((c) => String(c.name).toUpperCase()), ...(tbl.rows as Obj[]).map((r) => idx.map((i) => String(r.cells[i] ?? '')))];
  const widths = cols.map((_, i) => Math.max(5, ...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]! + 1)).join('').trimEnd()).join('\n');
}

describe('Servers with support for Table transformation (table_conversion.go)', () => {
  it('should return pod details', async () => {
    const ns = await newNamespace(t, 'tables');
    const podName = 'pod-1';
    await call(t, 'POST', `/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: podName },
      spec: {
        restartPolicy: 'Never',
        containers: [{ name: `${podName}-container`, image: 'registry.k8s.io/e2e-test-images/agnhost:2.45', args: ['porter'], env: [{ name: 'SERVE_PORT_8080', value: 'foo' }], ports: [{ containerPort: 8080 }] }],
      },
    }, undefined, 201);
    for (const accept of [TABLE_V1BETA1, TABLE_V1]) {
      const tbl = await table(`/api/v1/namespaces/${ns}/pods/${podName}`, accept);
      expect(tbl.apiVersion).toBe(accept === TABLE_V1 ? 'meta.k8s.io/v1' : 'meta.k8s.io/v1beta1');
      expect(tbl.columnDefinitions.length).toBeGreaterThan(2);
      expect(tbl.rows).toHaveLength(1);
      expect(tbl.rows[0].cells).toHaveLength(tbl.columnDefinitions.length);
      expect(tbl.columnDefinitions[0].name).toBe('Name');
      expect(tbl.rows[0].cells[0]).toBe(podName);
      const out = printTable(tbl);
      expect(out).toMatch(/^NAME\s/);
      expect(out).toMatch(/\npod-1\s/);
    }
  });

  it('should return chunks of table results for list calls', async () => {
    const ns = await newNamespace(t, 'tables');
    const path = `/api/v1/namespaces/${ns}/podtemplates`;
    await Promise.all(Array.from({ length: 20 }, (_, i) => call(t, 'POST', path, {
      apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: `template-${String(i).padStart(4, '0')}` },
      template: { spec: { containers: [{ name: 'test', image: 'test2' }] } },
    }, undefined, 201)));
    const paged = await table(`${path}?limit=2`, TABLE_V1BETA1);
    expect(paged.rows).toHaveLength(2);
    expect(paged.metadata.resourceVersion).toBeTruthy();
    expect(paged.metadata.continue).toBeTruthy();
    expect(paged.rows[0].cells[0]).toBe('template-0000');
    expect(paged.rows[1].cells[0]).toBe('template-0001');
    const next = await table(`${path}?continue=${encodeURIComponent(paged.metadata.continue)}`, TABLE_V1BETA1);
    expect(next.rows.length).toBeGreaterThan(0);
    expect(next.rows[0].cells[0]).toBe('template-0002');
  });

  it('should return generic metadata details across all namespaces for nodes', async () => {
    await call(t, 'POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'table-node' } }, undefined, 201);
    const tbl = await table('/api/v1/nodes', TABLE_V1BETA1);
    expect(tbl.columnDefinitions.length).toBeGreaterThanOrEqual(2);
    expect(tbl.rows.length).toBeGreaterThanOrEqual(1);
    expect(tbl.rows[0].cells).toHaveLength(tbl.columnDefinitions.length);
    expect(tbl.columnDefinitions[0].name).toBe('Name');
    expect(printTable(tbl)).toMatch(/^NAME\s/);
  });

  it('[Conformance] should return a 406 for a backend which does not implement metadata', async () => {
    const r = await t.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      body: { spec: { nonResourceAttributes: { path: '/', verb: 'get' } } },
      headers: { 'Content-Type': 'application/json', Accept: TABLE_V1BETA1 },
    });
    expect(r.status, r.text).toBe(406);
    expect(r.json<Obj>()).toMatchObject({ kind: 'Status', code: 406, reason: 'NotAcceptable' });
  });

  it("a custom resource's Table has Name and its additionalPrinterColumns (Age only when it declares none)", async () => {
    const crd = randomNameCrd('Cluster');
    crd.spec.versions[0].additionalPrinterColumns = [
      { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
      { name: 'Mode', type: 'string', jsonPath: '.spec.mode', priority: 1, description: 'the mode' },
    ];
    await createCrdAndWait(t, crd);
    const apiVersion = `${crd.spec.group}/v1beta1`;
    await call(t, 'POST', crPath(crd), { apiVersion, kind: crd.spec.names.kind, metadata: { name: 'one' }, spec: { size: 3, mode: 'fast' } }, undefined, 201);
    const tbl = await table(`${crPath(crd)}/one`, TABLE_V1);
    expect(tbl.columnDefinitions.map((c: Obj) => [c.name, c.type, c.priority])).toEqual([
      ['Name', 'string', 0], ['Size', 'integer', 0], ['Mode', 'string', 1],
    ]);
    expect(tbl.columnDefinitions[2].description).toBe('the mode');
    expect(tbl.rows[0].cells).toEqual(['one', 3, 'fast']);
    expect(tbl.rows[0].object.metadata.name).toBe('one');
    // without printer columns: Name and Age (kube's serveDefaultColumnsIfEmpty)
    const plain = await createCrdAndWait(t, randomNameCrd('Cluster'));
    await call(t, 'POST', crPath(plain), { apiVersion, kind: plain.spec.names.kind, metadata: { name: 'two' } }, undefined, 201);
    const p = await table(crPath(plain), TABLE_V1);
    expect(p.columnDefinitions.map((c: Obj) => c.name)).toEqual(['Name', 'Age']);
    expect(p.rows.map((r: Obj) => r.cells[0])).toEqual(['two']);
  });
});
