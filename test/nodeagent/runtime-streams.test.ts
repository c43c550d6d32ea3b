// The runtime's streaming calls over a real Unix socket (docs/nodeagent.md "Streams"):
// logs of a real `sh -c` process (tail, follow), exec with stdin and exit code, port-forward.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';
import type { ContainerLogChunk, StreamOutput } from '../../src/nodeagent/runtime/types.js';

let dir: string;
let sim: RunningSim;
let rt: RuntimeClient;
let sandbox: string;
const sbc = { metadata: { name: 'p', uid: 'u-streams', namespace: 'default', attempt: 0 } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-rts-'));
  sim = await startRuntimeSim(join(dir, 'runtime.sock'));
  rt = new RuntimeClient(`unix://${sim.socket}`);
  await rt.pullImage('busybox');
  sandbox = await rt.runPodSandbox(sbc);
});
afterAll(async () => {
  rt.close();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

async function run(script: string): Promise<string> {
  const id = await rt.createContainer(sandbox, { metadata: { name: `c${Math.random()}`, attempt: 0 }, image: { image: 'busybox' }, command: ['sh', '-c', script] }, sbc);
  await rt.startContainer(id);
  return id;
}

function collect(s: NodeJS.ReadableStream): Promise<ContainerLogChunk[]> {
  const out: ContainerLogChunk[] = [];
  return new Promise((resolve, reject) => {
    s.on('data', (c: ContainerLogChunk) => out.push(c));
    s.on('end', () => resolve(out));
    s.on('error', reject);
  });
}

const text = (chunks: { data: Buffer }[]) => Buffer.concat(chunks.map((c) => c.data)).toString();

describe('runtime streams', () => {
  it('keeps the log of a real process, with tail and streams', async () => {
    const id = await run('echo one; echo two; echo err >&2; printf three');
    for (let i = 0; i < 200 && (await rt.containerStatus(id)).state !== 'CONTAINER_EXITED'; i++) await new Promise((r) => setTimeout(r, 20));
    const all = await collect(rt.containerLog({ containerId: id, tailLines: -1 }));
    expect(text(all.filter((c) => c.stream === 'stdout'))).toBe('one\ntwo\nthree');
    expect(text(all.filter((c) => c.stream === 'stderr'))).toBe('err\n');
    expect(all.every((c) => c.timestamp > 0)).toBe(true);
    const tail = await collect(rt.containerLog({ containerId: id, tailLines: 1 }));
    expect(tail.length).toBe(1);
    expect((await rt.containerStatus(id)).exitCode).toBe(0);
  });

  it('follows a log while the process writes, and ends when it exits', async () => {
    const id = await run('for i in 1 2 3; do echo line $i; sleep 0.2; done; exit 4');
    const chunks = await collect(rt.containerLog({ containerId: id, follow: true, tailLines: -1 }));
    expect(text(chunks)).toBe('line 1\nline 2\nline 3\n');
    // the lines arrived as written, not at once: their timestamps differ
    expect(chunks[2]!.timestamp - chunks[0]!.timestamp).toBeGreaterThan(100_000_000);
    expect((await rt.containerStatus(id)).exitCode).toBe(4);
  });

  it('execs a command with stdin, stdout, stderr and its exit code', async () => {
    const id = await run('sleep 30');
    const call = rt.execStream();
    const out: StreamOutput[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', (m: StreamOutput) => out.push(m));
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.write({ start: { containerId: id, cmd: ['sh', '-c', 'cat; echo bad >&2; exit 3'], stdin: true, stdout: true, stderr: true } });
    call.write({ stdin: Buffer.from('hello\n') });
    call.write({ stdinClose: true });
    await done;
    expect(Buffer.concat(out.map((m) => m.stdout)).toString()).toBe('hello\n');
    expect(Buffer.concat(out.map((m) => m.stderr)).toString()).toBe('bad\n');
    expect(out.at(-1)).toMatchObject({ exited: true, exitCode: 3 });
    await rt.stopContainer(id, 0);
  });

  it('fails exec in a missing container with NOT_FOUND', async () => {
    const call = rt.execStream();
    const err = new Promise<{ code: number }>((resolve) => call.on('error', resolve));
    call.on('data', () => undefined);
    call.write({ start: { containerId: 'nope', cmd: ['true'] } });
    expect((await err).code).toBe(5);
  });

  it('forwards a port of the sandbox to a real listener', async () => {
    const server: Server = createServer((s) => s.on('data', (d) => s.end(`echo:${d}`)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const call = rt.portForwardStream();
    const got: Buffer[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', (m: { data: Buffer }) => got.push(m.data));
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.write({ podSandboxId: sandbox, port });
    call.write({ data: Buffer.from('ping') });
    await done;
    expect(Buffer.concat(got).toString()).toBe('echo:ping');
    server.close();
  });

  it('gives a container HOSTNAME = the sandbox hostname, as containerd does, unless its env sets it', async () => {
    const named = { metadata: { name: 'web-0', uid: 'u-hostname', namespace: 'default', attempt: 0 }, hostname: 'web-0' };
    const sb = await rt.runPodSandbox(named);
    const logOf = async (envs: { key: string; value: string }[]) => {
      const id = await rt.createContainer(sb, { metadata: { name: `h${envs.length}`, attempt: 0 }, image: { image: 'busybox' }, command: ['sh', '-c', 'echo $HOSTNAME'], envs }, named);
      await rt.startContainer(id);
      for (let i = 0; i < 200 && (await rt.containerStatus(id)).state !== 'CONTAINER_EXITED'; i++) await new Promise((r) => setTimeout(r, 20));
      return text(await collect(rt.containerLog({ containerId: id, tailLines: -1 })));
    };
    expect(await logOf([])).toBe('web-0\n');
    expect(await logOf([{ key: 'HOSTNAME', value: 'mine' }])).toBe('mine\n');
  });
});
