// What the simulated runtime runs for real (docs/nodeagent.md "What the simulator runs"):
// the emulated nginx image at the sandbox's own loopback address, a host program
// (a python echo server) as a real process, both reached through PortForwardStream;
// ExecSync with output, exit code and timeout; the sandbox's host-reachable address.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeCallError, RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { hostCommandScript, hostExecutable } from '../../src/nodeagent/runtime/sim-host-command.js';
import { nginxVersion } from '../../src/nodeagent/runtime/sim-nginx.js';
import { goFileMode } from '../../src/nodeagent/runtime/sim-agnhost.js';
import { withImageDefaults } from '../../src/nodeagent/runtime/sim-images.js';
import { sandboxLoopback } from '../../src/nodeagent/runtime/sim-network.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';
import { CONTAINER_PORTS_ANNOTATION, type ContainerConfig } from '../../src/nodeagent/runtime/types.js';
import { eventually } from '../helpers/eventually.js';
import { writePythonEchoServer } from '../helpers/python-echo.js';
import { freePort } from '../helpers/ports.js';

let dir: string;
let sim: RunningSim;
let rt: RuntimeClient;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-simimg-'));
  sim = await startRuntimeSim(join(dir, 'runtime.sock'));
  rt = new RuntimeClient(`unix://${sim.socket}`);
});
afterAll(async () => {
  rt.close();
  await sim.stop();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function pod(): Promise<{ sandbox: string; address: string }> {
  const sbc = { metadata: { name: `p${++n}`, uid: `u-simimg-${n}`, namespace: 'default', attempt: 0 } };
  const sandbox = await rt.runPodSandbox(sbc);
  const st = await rt.podSandboxStatus(sandbox);
  return { sandbox, address: st.network!.hostReachableIp! };
}
async function run(sandbox: string, config: Partial<ContainerConfig> & { image: { image: string } }): Promise<string> {
  await rt.pullImage(config.image.image);
  const sbc = { metadata: { name: 'x', uid: 'x', namespace: 'default', attempt: 0 } };
  const id = await rt.createContainer(sandbox, { metadata: { name: `c${++n}`, attempt: 0 }, ...config }, sbc);
  await rt.startContainer(id);
  return id;
}

/** one port-forward connection: sends `send` (then closes its side when `close`), collects what comes back */
function forward(sandbox: string, port: number, send: string, close = true): Promise<string> {
  const call = rt.portForwardStream();
  const got: Buffer[] = [];
  return new Promise((resolve, reject) => {
    call.on('data', (m: { data: Buffer; close: boolean }) => {
      if (m.data?.length) got.push(m.data);
      if (!close && Buffer.concat(got).length >= send.length) call.end();
    });
    call.on('end', () => resolve(Buffer.concat(got).toString()));
    call.on('error', reject);
    call.write({ podSandboxId: sandbox, port });
    call.write({ data: Buffer.from(send) });
    if (close) call.write({ close: true });
  });
}

function get(address: string, port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: address, port, path }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('sandbox network', () => {
  it('gives each sandbox its own 127.x.y.z, derived from its id, never 127.0.0.x, unique among live sandboxes', async () => {
    const a = await pod();
    const b = await pod();
    expect(a.address).toMatch(/^127\.([1-9]\d*)\.\d+\.\d+$/);
    expect(a.address).not.toBe(b.address);
    expect((await rt.podSandboxStatus(a.sandbox)).network!.ip).toMatch(/^10\.88\.0\./);
    expect(sandboxLoopback('abc', new Set())).toBe(sandboxLoopback('abc', new Set()));
    const first = sandboxLoopback('abc', new Set());
    expect(sandboxLoopback('abc', new Set([first]))).not.toBe(first);
  });
});

describe('emulated nginx', () => {
  it('knows nginx images by name whatever the registry and tag', () => {
    expect(nginxVersion('nginx')).toBe('1.27.3');
    expect(nginxVersion('docker.io/library/nginx:1.25.3-alpine')).toBe('1.25.3');
    expect(nginxVersion('nginx:1.26')).toBe('1.26.0');
    expect(nginxVersion('registry.local:5000/nginx@sha256:abcd')).toBe('1.27.3');
    expect(nginxVersion('nginx-ingress')).toBeUndefined();
    expect(nginxVersion('bitnami/nginx-exporter:1')).toBeUndefined();
  });

  it('serves the welcome page on port 80 at the sandbox address, through port-forward, and stops with the container', async () => {
    const { sandbox, address } = await pod();
    const id = await run(sandbox, { image: { image: 'nginx:1.25.3' } });
    const page = await eventually(() => get(address, 80, '/'));
    expect(page.status).toBe(200);
    expect(page.headers.server).toBe('nginx/1.25.3');
    expect(page.headers['content-type']).toBe('text/html');
    expect(page.body).toContain('<h1>Welcome to nginx!</h1>');
    const missing = await get(address, 80, '/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toContain('<center><h1>404 Not Found</h1></center>');
    expect(missing.body).toContain('<hr><center>nginx/1.25.3</center>');
    // what kubectl port-forward / the python client's test_portforward_http does: raw HTTP through the stream
    const raw = await forward(sandbox, 80, 'GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(raw).toContain('<h1>Welcome to nginx!</h1>');
    // a second nginx pod serves port 80 too: each at its own address
    const other = await pod();
    await run(other.sandbox, { image: { image: 'nginx' } });
    expect((await eventually(() => get(other.address, 80, '/'))).headers.server).toBe('nginx/1.27.3');
    await rt.stopContainer(id, 0);
    await expect(get(address, 80, '/')).rejects.toThrow(/ECONNREFUSED/);
  });

  it('listens on the declared container ports instead of 80', async () => {
    const { sandbox, address } = await pod();
    const port = await freePort();
    await run(sandbox, { image: { image: 'nginx' }, annotations: { [CONTAINER_PORTS_ANNOTATION]: JSON.stringify([{ containerPort: port, protocol: 'TCP' }]) } });
    expect((await eventually(() => get(address, port, '/'))).status).toBe(200);
    await expect(get(address, 80, '/')).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('emulated nginx on a port the host holds', () => {
  it('logs nginx’s bind() failure and keeps running (the host is the cause, not the pod)', async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(port, '0.0.0.0', r));
    try {
      const { sandbox } = await pod();
      const id = await run(sandbox, { image: { image: 'nginx' }, annotations: { [CONTAINER_PORTS_ANNOTATION]: JSON.stringify([{ containerPort: port }]) } });
      const line = await eventually(async () => {
        const chunks: Buffer[] = [];
        await new Promise<void>((resolve, reject) => rt.containerLog({ containerId: id, tailLines: -1 }).on('data', (c: { data: Buffer }) => chunks.push(c.data)).on('end', resolve).on('error', reject));
        return Buffer.concat(chunks).toString().split('\n').find((l) => l.includes('[emerg]'));
      }, 'the emerg line');
      expect(line).toContain(`bind() to `);
      expect(line).toContain(`:${port} failed (98: Address already in use)`);
      expect((await rt.containerStatus(id)).state).toBe('CONTAINER_RUNNING');
    } finally {
      holder.close();
    }
  });
});

describe('host programs', () => {
  it('runs a command whose argv[0] the host has; anything else stays pretended', () => {
    expect(hostExecutable('sh')).toMatch(/\/sh$/);
    expect(hostExecutable('/bin/sh')).toBe('/bin/sh');
    expect(hostExecutable('no-such-program-orch')).toBeUndefined();
    expect(hostExecutable('./sh')).toBeUndefined();
    const cfg = (command: string[]): ContainerConfig => ({ metadata: { name: 'c', attempt: 0 }, image: { image: 'x' }, command });
    expect(hostCommandScript(cfg(['sh', "it's"]))).toBe(`exec 'sh' 'it'\\''s'`);
    expect(hostCommandScript(cfg(['/server', '--port=1']))).toBeUndefined();
  });

  it('a python echo server runs for real and is reached by port-forward; a port nobody serves fails', async () => {
    const { sandbox } = await pod();
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    const script = join(dir, 'echo.py');
    await writePythonEchoServer(script, 0);
    const id = await run(sandbox, { image: { image: 'python' }, command: ['python3', '-u', script, String(p1), String(p2)] });
    expect(await eventually(async () => (await forward(sandbox, p1, 'hello', false)) === 'hello', 'the echo server')).toBe(true);
    expect(await forward(sandbox, p2, 'other port', false)).toBe('other port');
    await expect(forward(sandbox, p3, 'x')).rejects.toMatchObject({ code: 14 });
    await rt.stopContainer(id, 0);
    expect((await rt.containerStatus(id)).state).toBe('CONTAINER_EXITED');
  });
});

describe('ExecSync', () => {
  it('answers output and exit code; past the timeout DEADLINE_EXCEEDED; a stopped container FAILED_PRECONDITION', async () => {
    const { sandbox } = await pod();
    const id = await run(sandbox, { image: { image: 'busybox' }, command: ['sleep', '3600'] });
    const r = await rt.execSync(id, ['sh', '-c', 'echo out; echo err >&2; exit 3'], 5);
    expect(r.stdout.toString()).toBe('out\n');
    expect(r.stderr.toString()).toBe('err\n');
    expect(r.exitCode).toBe(3);
    expect((await rt.execSync(id, ['no-such-program-orch'], 5)).exitCode).toBe(127);
    const slow = await rt.execSync(id, ['sleep', '5'], 1).catch((e: unknown) => e);
    expect(slow).toBeInstanceOf(RuntimeCallError);
    expect((slow as RuntimeCallError).code).toBe(4);
    await rt.stopContainer(id, 0);
    await expect(rt.execSync(id, ['true'], 1)).rejects.toMatchObject({ code: 9 });
  });
});

describe('image configs and the emulated agnhost', () => {
  const AGN = 'registry.k8s.io/e2e-test-images/agnhost:2.53';
  const logOf = async (id: string): Promise<string> => {
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => rt.containerLog({ containerId: id, tailLines: -1 }).on('data', (c: { data: Buffer }) => chunks.push(c.data)).on('end', resolve).on('error', reject));
    return Buffer.concat(chunks).toString();
  };
  const exited = (id: string) => eventually(async () => {
    const st = await rt.containerStatus(id);
    return st.state === 'CONTAINER_EXITED' && st;
  }, `${id} exited`);

  it("fills in the image's ENTRYPOINT and CMD as containerd does: a command drops the CMD, args replace it", () => {
    const cfg = (o: Partial<ContainerConfig>): ContainerConfig => ({ metadata: { name: 'c', attempt: 0 }, image: { image: AGN }, ...o });
    const argv = (c: ContainerConfig) => [...(c.command ?? []), ...(c.args ?? [])];
    expect(argv(withImageDefaults(cfg({})))).toEqual(['/agnhost', 'pause']);
    expect(argv(withImageDefaults(cfg({ args: ['netexec'] })))).toEqual(['/agnhost', 'netexec']);
    expect(argv(withImageDefaults(cfg({ command: ['/agnhost-2'] })))).toEqual(['/agnhost-2']);
    expect(argv(withImageDefaults(cfg({ command: ['sh', '-c', 'x'], args: [] })))).toEqual(['sh', '-c', 'x']);
    // an image the simulator has no config of runs the pod's command and args as given
    expect(withImageDefaults(cfg({ image: { image: 'busybox' }, args: ['x'] }))).toEqual(cfg({ image: { image: 'busybox' }, args: ['x'] }));
  });

  it('pause prints Paused and ends with 2 on SIGTERM; entrypoint-tester prints its argv and exits 0', async () => {
    const { sandbox } = await pod();
    const paused = await run(sandbox, { image: { image: AGN } });
    expect(await eventually(async () => (await logOf(paused)) === 'Paused\n' || undefined, 'Paused')).toBe(true);
    await rt.stopContainer(paused, 1);
    expect((await exited(paused)).exitCode).toBe(2);
    const tester = await run(sandbox, { image: { image: AGN }, command: ['/agnhost-2'], args: ['entrypoint-tester', 'a b'] });
    expect(await exited(tester)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(await logOf(tester)).toBe('[/agnhost-2 entrypoint-tester a b]\n');
  });

  it('mounttest writes, reads and shows modes through the mounts; a missing file is exit 1', async () => {
    const vol = join(dir, 'mt-vol');
    await mkdir(vol, { recursive: true });
    await writeFile(join(vol, 'data'), 'value-1\n');
    const mounts = [{ containerPath: '/test-volume', hostPath: vol, readonly: false }];
    const { sandbox } = await pod();
    const ok = await run(sandbox, { image: { image: AGN }, args: ['mounttest', '--new_file_0666=/test-volume/new', '--file_mode=/test-volume/new', '--file_content=/test-volume/data'], mounts });
    expect(await exited(ok)).toMatchObject({ exitCode: 0 });
    expect(await logOf(ok)).toBe('content of file "/test-volume/new": mount-tester new file\n\nmode of file "/test-volume/new": -rw-rw-rw-\ncontent of file "/test-volume/data": value-1\n\n');
    const loop = await run(sandbox, { image: { image: AGN }, args: ['mounttest', '--file_content_in_loop=/test-volume/none', '--retry_time=1'], mounts });
    expect(await exited(loop)).toMatchObject({ exitCode: 1 });
    expect(await logOf(loop)).toBe('Error reading file /test-volume/none: open /test-volume/none: no such file or directory, retrying\n');
    expect(goFileMode(0o1777, true)).toBe('dtrwxrwxrwx');
  });
});
