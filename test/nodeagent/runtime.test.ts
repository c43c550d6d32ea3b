// The runtime interface over a real Unix socket: the agent's client against the simulator.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeCallError, RuntimeClient, SimControlClient } from '../../src/nodeagent/runtime/client.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';

let dir: string;
let sim: RunningSim;
let rt: RuntimeClient;
let ctl: SimControlClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-rt-'));
  sim = await startRuntimeSim(join(dir, 'runtime.sock'));
  rt = new RuntimeClient(`unix://${sim.socket}`);
  ctl = new SimControlClient(sim.socket);
});
afterAll(async () => {
  rt.close();
  ctl.close();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

const until = async (f: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not reached');
};

describe('runtime interface over a Unix socket', () => {
  it('reports its version and health', async () => {
    const v = await rt.version();
    expect(v.runtimeName).toBe('orch-runtime-sim');
    expect(v.runtimeApiVersion).toBe('v1');
    const s = await rt.status();
    expect(s.status?.conditions.map((c) => [c.type, c.status])).toEqual([['RuntimeReady', true], ['NetworkReady', true]]);
  });

  it('runs a sandbox and containers through their states, with exit codes and memory use', async () => {
    const sbc = { metadata: { name: 'p', uid: 'u1', namespace: 'default', attempt: 0 }, labels: { pod: 'p' } };
    const sb = await rt.runPodSandbox(sbc);
    expect((await rt.podSandboxStatus(sb)).state).toBe('SANDBOX_READY');
    await expect(rt.createContainer(sb, { metadata: { name: 'c', attempt: 0 }, image: { image: 'nginx' } }, sbc)).rejects.toMatchObject({ code: 5 });
    await rt.pullImage('nginx');
    expect((await rt.imageStatus('nginx'))?.repoTags).toEqual(['nginx:latest']);
    const long = await rt.createContainer(sb, { metadata: { name: 'web', attempt: 0 }, image: { image: 'nginx' } }, sbc);
    const short = await rt.createContainer(sb, { metadata: { name: 'job', attempt: 0 }, image: { image: 'nginx' }, command: ['sh', '-c', 'exit 3'] }, sbc);
    expect((await rt.containerStatus(long)).state).toBe('CONTAINER_CREATED');
    await rt.startContainer(long);
    await rt.startContainer(short);
    const st = await rt.containerStatus(long);
    expect(st.state).toBe('CONTAINER_RUNNING');
    expect(st.startedAt).toBeGreaterThan(0);
    expect((await rt.containerStats(long)).memory?.workingSetBytes?.value).toBeGreaterThan(0);
    await until(async () => (await rt.containerStatus(short)).state === 'CONTAINER_EXITED');
    expect((await rt.containerStatus(short)).exitCode).toBe(3);
    expect((await rt.listContainers({ podSandboxId: sb, state: 'CONTAINER_RUNNING' })).map((c) => c.id)).toEqual([long]);
    await ctl.exitContainer(long, 7);
    expect((await rt.containerStatus(long)).exitCode).toBe(7);
    await rt.removeContainer(long);
    await expect(rt.containerStatus(long)).rejects.toBeInstanceOf(RuntimeCallError);
    await rt.stopPodSandbox(sb);
    expect((await rt.listPodSandbox({ pod: 'p' }))[0]?.state).toBe('SANDBOX_NOTREADY');
    await rt.removePodSandbox(sb);
    expect(await rt.listPodSandbox({ pod: 'p' })).toEqual([]);
  });

  it('writes a checkpoint archive (tar, mode 0600) and answers injected faults', async () => {
    const sbc = { metadata: { name: 'q', uid: 'u2', namespace: 'default', attempt: 0 } };
    const sb = await rt.runPodSandbox(sbc);
    await rt.pullImage('redis:7');
    const c = await rt.createContainer(sb, { metadata: { name: 'r', attempt: 0 }, image: { image: 'redis:7' } }, sbc);
    await rt.startContainer(c);
    const loc = join(dir, 'cp', 'a.tar');
    await rt.checkpointContainer(c, loc, 0);
    expect((await stat(loc)).mode & 0o777).toBe(0o600);
    const tar = await readFile(loc);
    expect(tar.subarray(257, 262).toString()).toBe('ustar');
    expect(tar.subarray(0, 11).toString()).toBe('config.dump');
    await ctl.setFaults([{ method: 'CheckpointContainer', code: 12, message: 'not here' }]);
    const err = (await rt.checkpointContainer(c, loc, 0).catch((e: unknown) => e)) as RuntimeCallError;
    expect(err.unimplemented).toBe(true);
    await ctl.setFaults([{ method: 'Version', code: 13, message: 'broken' }]);
    await expect(rt.version()).rejects.toThrow(/INTERNAL: broken/);
    await ctl.setFaults([]);
    expect((await rt.version()).runtimeName).toBe('orch-runtime-sim');
  });
});
