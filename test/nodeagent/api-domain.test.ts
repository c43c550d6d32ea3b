// An agent started without --api-domain against a `--api-domain k8s.io` control
// plane learns the domain from GET /apis and heartbeats through
// coordination.k8s.io (it used to ask for coordination.orch.io leases: 403 forever).
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { domainFromGroups } from '../../src/nodeagent/api-domain.js';
import { eventually } from '../helpers/eventually.js';
import { type AgentProcess, startAgentProcess, waitNodeReady } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

describe('domainFromGroups', () => {
  it('takes the domain of the coordination group, and nothing from answers without one', () => {
    expect(domainFromGroups({ kind: 'APIGroupList', groups: [{ name: 'apps' }, { name: 'coordination.k8s.io' }] })).toBe('k8s.io');
    expect(domainFromGroups({ groups: [{ name: 'coordination.orch.io' }] })).toBe('orch.io');
    expect(domainFromGroups({ groups: [{ name: 'apps' }, { name: 'coordination.' }] })).toBeUndefined();
    expect(domainFromGroups({ kind: 'Status' })).toBeUndefined();
    expect(domainFromGroups(null)).toBeUndefined();
  });
});

let ts: TestServer;
let agent: AgentProcess | undefined;
beforeAll(async () => {
  ts = await startTestServer({ apiDomain: 'k8s.io' });
});
afterAll(async () => {
  await agent?.stop();
  if (agent) await rm(agent.dir, { recursive: true, force: true });
  await ts?.stop();
});

describe('an agent without --api-domain', () => {
  it('renews its Lease through coordination.k8s.io on a k8s.io control plane', async () => {
    agent = await startAgentProcess(ts, { nodeName: 'node-k', config: { apiVersion: 'nodeagent.config.k8s.io/v1beta1' } });
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-k';
    await eventually(async () => (await ts.request('GET', path)).status === 200, 'the node-k Lease');
    const lease = (await ts.request('GET', path)).json<{ spec: { holderIdentity: string } }>();
    expect(lease.spec.holderIdentity).toBe('node-k');
    expect(agent.output()).not.toContain('cannot learn the API domain');
    expect(agent.output()).not.toContain('lease renewal failed');
  });

  it('reports Ready with kubelet\'s reason and message, as tools expect of a k8s.io cluster', async () => {
    await waitNodeReady(ts, agent!, 'node-k');
    const node = (await ts.request('GET', '/api/v1/nodes/node-k')).json<{ status: { conditions: { type: string; reason: string; message: string }[] } }>();
    expect(node.status.conditions.find((c) => c.type === 'Ready')).toMatchObject({ reason: 'KubeletReady', message: 'kubelet is posting ready status' });
  });
});
