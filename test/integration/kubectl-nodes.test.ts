// Node management with the real kubectl 1.32, as kubectl's own command tests
// drive it against a registered Node: taint and cordon, and the managedFields
// entries those commands leave (kube's NodeSpec is a struct, so a node always
// has `spec` and its creator owns `f:spec`; later writers are then tracked).

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../helpers/kubectl.js';
import { NO_NODE_LIFECYCLE, type TestServer, startTestServer } from '../helpers/server.js';

let t: TestServer;
const k = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);

beforeAll(async () => {
  // without the node lifecycle controller and the TaintNodesByCondition plugin, whose not-ready taints would take over the (atomic) taints list
  t = await startTestServer(NO_NODE_LIFECYCLE);
});
afterAll(async () => {
  await t?.stop();
});

const managers = async (node: string): Promise<string[]> => {
  const r = await k('get', 'node', node, '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}');
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.split(' ').filter((m) => m !== '');
};

describe('a node created without a spec', () => {
  it('is served with an empty spec owned by its creator', async () => {
    const f = join(t.dataDir, 'bare-node.json');
    await writeFile(f, JSON.stringify({ kind: 'Node', apiVersion: 'v1', metadata: { name: 'bare' }, status: { capacity: { memory: '1Gi' } } }));
    expect((await k('create', '-f', f)).code).toBe(0);
    const node = JSON.parse((await k('get', 'node', 'bare', '-o', 'json', '--show-managed-fields')).stdout);
    expect(node.spec).toEqual({});
    expect(node.metadata.managedFields).toEqual([expect.objectContaining({ manager: 'kubectl-create', operation: 'Update', fieldsV1: { 'f:spec': {} } })]);
  });

  it('records kubectl taint and cordon as managers of what they changed', async () => {
    expect((await k('taint', 'node', 'bare', 'dedicated=foo:PreferNoSchedule')).code).toBe(0);
    expect(await managers('bare')).toContain('kubectl-taint');
    expect((await k('cordon', 'bare')).code).toBe(0);
    // cordon sends no fieldManager: the User-Agent's product names it
    expect((await managers('bare')).sort()).toEqual(['kubectl', 'kubectl-create', 'kubectl-taint']);
    const r = await k('get', 'node', 'bare', '-o', 'jsonpath={.spec.unschedulable}/{.spec.taints[0].key}');
    expect(r.stdout).toBe('true/dedicated');
  });
});
