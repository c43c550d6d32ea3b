// Device plugins (spec 002 §4.2): a plugin registers on the agent's real
// registration socket, its resource shows in the Node's capacity and
// allocatable, and the checkpoint file carries it over an agent restart.
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protoService } from '../../src/nodeagent/runtime/proto.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let plugin: grpc.Server | undefined;
const streams: grpc.ServerWritableStream<object, object>[] = [];

beforeAll(async () => {
  ts = await startTestServer();
  agent = await startAgentProcess(ts, { nodeName: 'gpu-node' });
});
afterAll(async () => {
  for (const s of streams) s.end();
  plugin?.forceShutdown();
  await agent?.stop();
  await ts?.stop();
  if (agent) await rm(agent.dir, { recursive: true, force: true });
});

async function until<T>(f: () => Promise<T | false | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await f().catch(() => undefined);
    if (v) return v;
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${what}\n${agent.output()}`);
}

async function servePlugin(sock: string): Promise<void> {
  plugin = new grpc.Server();
  plugin.addService(protoService('deviceplugin.proto', 'v1beta1', 'DevicePlugin'), {
    GetDevicePluginOptions: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, {}),
    ListAndWatch: (call: grpc.ServerWritableStream<object, object>) => {
      streams.push(call);
      call.write({ devices: [{ ID: 'gpu-0', health: 'Healthy' }, { ID: 'gpu-1', health: 'Unhealthy' }] });
    },
  });
  await new Promise<void>((resolve, reject) => plugin!.bindAsync(`unix:${sock}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
}

function register(req: object): Promise<grpc.ServiceError | null> {
  const Ctor = grpc.makeGenericClientConstructor(protoService('deviceplugin.proto', 'v1beta1', 'Registration'), 'Registration');
  const c = new Ctor(`unix:${join(agent.rootDir, 'device-plugins', 'nodeagent.sock')}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & { Register(r: object, cb: (e: grpc.ServiceError | null) => void): void };
  return new Promise((resolve) => c.Register(req, (e) => {
    c.close();
    resolve(e);
  }));
}

const resources = async () => {
  const r = await ts.request('GET', '/api/v1/nodes/gpu-node');
  return r.status === 200 ? r.json<{ status: { capacity: Record<string, string>; allocatable: Record<string, string> } }>().status : undefined;
};

describe('device plugins', () => {
  it('refuses bad registrations with a reason', async () => {
    expect((await register({ version: 'v1alpha1', endpoint: 'x.sock', resourceName: 'example.com/gpu' }))?.details).toMatch(/unsupported device plugin API version "v1alpha1"/);
    expect((await register({ version: 'v1beta1', endpoint: 'x.sock', resourceName: 'gpu' }))?.details).toMatch(/invalid extended resource name "gpu"/);
    expect((await register({ version: 'v1beta1', endpoint: '../x.sock', resourceName: 'example.com/gpu' }))?.details).toMatch(/invalid endpoint/);
  });

  it('a registered resource appears in capacity/allocatable and survives a restart through the checkpoint', async () => {
    const sock = join(agent.rootDir, 'device-plugins', 'gpu.sock');
    await servePlugin(sock);
    expect(await register({ version: 'v1beta1', endpoint: 'gpu.sock', resourceName: 'example.com/gpu' })).toBeNull();
    const st = await until(async () => { const s = await resources(); return s?.capacity['example.com/gpu'] === '2' && s; }, 'capacity');
    expect(st.allocatable['example.com/gpu']).toBe('1');
    const cp = JSON.parse(await readFile(join(agent.rootDir, 'device-plugins', 'nodeagent_internal_checkpoint'), 'utf8')) as { Data: { RegisteredDevices: Record<string, string[]> } };
    expect(cp.Data.RegisteredDevices).toEqual({ 'example.com/gpu': ['gpu-0', 'gpu-1'] });

    // restart the agent on the same root dir; the plugin is gone meanwhile
    for (const s of streams.splice(0)) s.end();
    plugin!.forceShutdown();
    await agent.stop();
    agent = await startAgentProcess(ts, { nodeName: 'gpu-node', dir: agent.dir });
    const after = await until(async () => { const s = await resources(); return s?.allocatable['example.com/gpu'] === '0' && s; }, 'from checkpoint');
    expect(after.capacity['example.com/gpu']).toBe('2');
    // the plugin comes back and registers again
    await servePlugin(sock);
    expect(await register({ version: 'v1beta1', endpoint: 'gpu.sock', resourceName: 'example.com/gpu' })).toBeNull();
    await until(async () => (await resources())?.allocatable['example.com/gpu'] === '1', 'allocatable again');
  });
});
