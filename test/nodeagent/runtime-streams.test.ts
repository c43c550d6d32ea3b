// The runtime's streaming calls over a real Unix socket (docs/nodeagent.md "Streams"):
// logs of a real `sh -c` process (tail, follow), exec with stdin and exit code, port-forward.
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useSimSandbox } from '../helpers/sim-sandbox.js';
import type { ContainerLogChunk, StreamOutput } from '../../src/nodeagent/runtime/types.js';

const box = useSimSandbox('u-streams');
const run = (script: string): Promise<string> => box.run(script);

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
    for (let i = 0; i < 200 && (await box.rt.containerStatus(id)).state !== 'CONTAINER_EXITED'; i++) await new Promise((r) => setTimeout(r, 20));
    const all = await collect(box.rt.containerLog({ containerId: id, tailLines: -1 }));
    expect(text(all.filter((c) => c.stream === 'stdout'))).toBe('one\ntwo\nthree');
    expect(text(all.filter((c) => c.stream === 'stderr'))).toBe('err\n');
    expect(all.every((c) => c.timestamp > 0)).toBe(true);
    const tail = await collect(box.rt.containerLog({ containerId: id, tailLines: 1 }));
    expect(tail.length).toBe(1);
    expect((await box.rt.containerStatus(id)).exitCode).toBe(0);
  });

  it('follows a log while the process writes, and ends when it exits', async () => {
    const id = await run('for i in 1 2 3; do echo line $i; sleep 0.2; done; exit 4');
    const chunks = await collect(box.rt.containerLog({ containerId: id, follow: true, tailLines: -1 }));
    expect(text(chunks)).toBe('line 1\nline 2\nline 3\n');
    // the lines arrived as written, not at once: their timestamps differ
    expect(chunks[2]!.timestamp - chunks[0]!.timestamp).toBeGreaterThan(100_000_000);
    expect((await box.rt.containerStatus(id)).exitCode).toBe(4);
  });

  it('execs a command with stdin, stdout, stderr and its exit code', async () => {
    const id = await run('sleep 30');
    const call = box.rt.execStream();
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
    await box.rt.stopContainer(id, 0);
  });

  it('fails exec in a missing container with NOT_FOUND', async () => {
    const call = box.rt.execStream();
    const err = new Promise<{ code: number }>((resolve) => call.on('error', resolve));
    call.on('data', () => undefined);
    call.write({ start: { containerId: 'nope', cmd: ['true'] } });
    expect((await err).code).toBe(5);
  });

  it('forwards a port of the sandbox to a real listener', async () => {
    const server: Server = createServer((s) => s.on('data', (d) => s.end(`echo:${d}`)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const call = box.rt.portForwardStream();
    const got: Buffer[] = [];
    const done = new Promise<void>((resolve, reject) => {
      call.on('data', (m: { data: Buffer }) => got.push(m.data));
      call.on('end', resolve);
      call.on('error', reject);
    });
    call.write({ podSandboxId: box.sandbox, port });
    call.write({ data: Buffer.from('ping') });
    await done;
    expect(Buffer.concat(got).toString()).toBe('echo:ping');
    server.close();
  });

  it('gives a container HOSTNAME = the sandbox hostname, as containerd does, unless its env sets it', async () => {
    const named = { metadata: { name: 'web-0', uid: 'u-hostname', namespace: 'default', attempt: 0 }, hostname: 'web-0' };
    const sb = await box.rt.runPodSandbox(named);
    const logOf = async (envs: { key: string; value: string }[]) => {
      const id = await box.rt.createContainer(sb, { metadata: { name: `h${envs.length}`, attempt: 0 }, image: { image: 'busybox' }, command: ['sh', '-c', 'echo $HOSTNAME'], envs }, named);
      await box.rt.startContainer(id);
      for (let i = 0; i < 200 && (await box.rt.containerStatus(id)).state !== 'CONTAINER_EXITED'; i++) await new Promise((r) => setTimeout(r, 20));
      return text(await collect(box.rt.containerLog({ containerId: id, tailLines: -1 })));
    };
    expect(await logOf([])).toBe('web-0\n');
    expect(await logOf([{ key: 'HOSTNAME', value: 'mine' }])).toBe('mine\n');
  });
});
