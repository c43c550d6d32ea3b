// The pieces behind kube's runtime and lifecycle-hook e2e tests (e2e-node-runtime.test.ts), alone:
// runHook's handlers and kubelet's failure texts, the termination message's limits (the file's last
// 4096 bytes; the log's last 2048 bytes of 80 lines only on a failure with FallbackToLogsOnError), and
// the activeDeadlineSeconds rule; and the simulated runtime's StopContainer timeout and ExecSync without one.

import { createServer, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pastActiveDeadline } from '../../src/nodeagent/active-deadline.js';
import type { Clock } from '../../src/nodeagent/clock.js';
import { runHook } from '../../src/nodeagent/lifecycle-hooks.js';
import type { ContainerLogRequest, ContainerStatus } from '../../src/nodeagent/runtime/types.js';
import { bytesPerStatus, TerminationMessages } from '../../src/nodeagent/termination-message.js';
import { freePort } from '../helpers/ports.js';
import { useSimSandbox } from '../helpers/sim-sandbox.js';

const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };
const container = { name: 'c' };
const exec = (exitCode: number, stdout = '', stderr = '') => ({ execSync: async () => ({ exitCode, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) }) });
/** a clock whose timers fire when advance() says */
function manualClock(): Clock & { advance(ms: number): void } {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimeout: (fn, ms) => timers.push({ at: now + ms, fn: fn as () => void }),
    clearTimeout: () => undefined,
    advance(ms) {
      now += ms;
      for (const t of timers.filter((x) => x.at <= now)) t.fn();
    },
  };
}
const target = (address = '127.0.0.1') => ({ pod, container, containerId: 'id1', address: async () => address });

describe('runHook', () => {
  let http: Server;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    http = createServer((req, res) => res.writeHead(req.url === '/bad' ? 500 : 200).end());
    await new Promise<void>((r) => http.listen(port, '127.0.0.1', r));
  });
  afterAll(() => http.close());

  it('exec: exit 0 is success; another code is kubelet\'s message with the CRI error and the output', async () => {
    const clock = manualClock();
    expect(await runHook({ exec: { command: ['true'] } }, target(), exec(0), clock)).toBeUndefined();
    expect(await runHook({ exec: { command: ['sh', '-c', 'exit 3'] } }, target(), exec(3, 'out\n', 'err\n'), clock)).toBe(
      'Exec lifecycle hook ([sh -c exit 3]) for Container "c" in Pod "p_ns(u1)" failed - error: command \'sh -c exit 3\' exited with 3: err\n, message: "out\\nerr\\n"',
    );
  });

  it('httpGet: any answer is a success, even a 500; no answer is kubelet\'s HTTP hook message', async () => {
    const clock = manualClock();
    expect(await runHook({ httpGet: { path: '/bad', port } }, target(), exec(0), clock)).toBeUndefined();
    const closed = await freePort();
    expect(await runHook({ httpGet: { path: '/x', port: closed } }, target(), exec(0), clock)).toBe(
      `HTTP lifecycle hook (/x) for Container "c" in Pod "p_ns(u1)" failed - error: Get "http://127.0.0.1:${closed}/x": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    );
  });

  it('sleep: returns once the seconds have passed on the clock', async () => {
    const clock = manualClock();
    let done = false;
    const p = runHook({ sleep: { seconds: 5 } }, target(), exec(0), clock).then(() => (done = true));
    clock.advance(4_000);
    await Promise.resolve();
    expect(done).toBe(false);
    clock.advance(1_000);
    await p;
    expect(done).toBe(true);
  });
});

describe('TerminationMessages', () => {
  let root: string;
  beforeAll(async () => (root = await mkdtemp(join(tmpdir(), 'orch-tm-'))));
  afterAll(() => rm(root, { recursive: true, force: true }));
  const logLines = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, '0')} ${'x'.repeat(30)}\n`);
  const asked: ContainerLogRequest[] = [];
  const runtime = {
    containerLog(req: ContainerLogRequest) {
      asked.push(req);
      const s = new PassThrough({ objectMode: true });
      for (const l of logLines.slice(-(req.tailLines ?? 0))) s.write({ timestamp: 0, stream: 'stdout', data: Buffer.from(l) });
      s.end();
      return s;
    },
  };
  const exited = (id: string, attempt: number, exitCode: number): ContainerStatus =>
    ({ id, metadata: { name: 'c', attempt }, state: 'CONTAINER_EXITED', exitCode } as ContainerStatus);

  it('mounts an empty file per attempt at the path; reads the last 4096 bytes of it', async () => {
    const tm = new TerminationMessages(root, runtime);
    const spec = { name: 'c', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' };
    const [m] = await tm.prepare('u1', spec, 0);
    expect(m).toEqual({ containerPath: '/dev/termination-log', hostPath: join(root, 'pods', 'u1', 'containers', 'c', '0') });
    expect(await readFile(m!.hostPath, 'utf8')).toBe('');
    await writeFile(m!.hostPath, `${'a'.repeat(100)}${'b'.repeat(4096)}`);
    await tm.load('u1', spec, exited('k1', 0, 1), 12288);
    expect(tm.get('u1', 'k1')).toBe('b'.repeat(4096));
    // policy File: an empty file on a failure is no message, and the log is not read
    await tm.prepare('u1', spec, 1);
    await tm.load('u1', spec, exited('k2', 1, 1), 12288);
    expect(tm.get('u1', 'k2')).toBe('');
    expect(asked).toEqual([]);
  });

  it('a pod\'s messages stay within 12 KiB: each keeps its first 12288 / containers bytes', async () => {
    expect([1, 4, 5].map(bytesPerStatus)).toEqual([12288, 3072, 2457]);
    const tm = new TerminationMessages(root, runtime);
    const spec = { name: 'm', terminationMessagePath: '/dev/termination-log' };
    const [m] = await tm.prepare('u3', spec, 0);
    await writeFile(m!.hostPath, `${'a'.repeat(3000)}${'b'.repeat(1096)}`);
    await tm.load('u3', spec, exited('k5', 0, 0), bytesPerStatus(4));
    expect(tm.get('u3', 'k5')).toBe(`${'a'.repeat(3000)}${'b'.repeat(72)}`);
  });

  it('FallbackToLogsOnError: the log\'s 80 last lines, their last 2048 bytes, on a failure only', async () => {
    const tm = new TerminationMessages(root, runtime);
    const spec = { name: 'f', terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'FallbackToLogsOnError' };
    await tm.prepare('u2', spec, 0);
    await tm.load('u2', spec, exited('k3', 0, 0), 12288);
    expect(tm.get('u2', 'k3')).toBe('');
    await tm.load('u2', spec, exited('k4', 0, 2), 12288);
    expect(asked.at(-1)).toMatchObject({ containerId: 'k4', tailLines: 80 });
    const all = logLines.slice(-80).join('');
    expect(tm.get('u2', 'k4')).toBe(all.slice(-2048));
    tm.forget('u2');
    expect(tm.get('u2', 'k4')).toBe('');
  });
});

describe('pastActiveDeadline', () => {
  const at = (seconds?: number, startTime?: string) => ({ spec: { activeDeadlineSeconds: seconds }, status: startTime ? { startTime } : {} });
  it('is true once the pod has been active that long since status.startTime', () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    expect(pastActiveDeadline(at(5, '2026-01-01T00:00:00Z'), start + 4_999)).toBe(false);
    expect(pastActiveDeadline(at(5, '2026-01-01T00:00:00Z'), start + 5_000)).toBe(true);
    expect(pastActiveDeadline(at(undefined, '2026-01-01T00:00:00Z'), start + 1e9)).toBe(false);
    expect(pastActiveDeadline(at(5), start + 1e9)).toBe(false);
  });
});

describe('the simulated runtime', () => {
  // a request timeout of 300 ms: an ExecSync without a timeout of its own must not inherit it
  const box = useSimSandbox('u-hooks', 300);
  async function run(script: string): Promise<string> {
    const id = await box.run(script);
    // the script's trap is set once it printed
    for (let i = 0; i < 100 && !(await readLog(id)).includes('up'); i++) await new Promise((r) => setTimeout(r, 20));
    return id;
  }
  const readLog = (id: string) => new Promise<string>((resolve) => {
    let out = '';
    const s = box.rt.containerLog({ containerId: id, tailLines: -1 });
    s.on('data', (c: { data: Buffer }) => (out += c.data.toString()));
    s.on('end', () => resolve(out));
    s.on('error', () => resolve(out));
  });

  it('StopContainer lets a process handle SIGTERM within the timeout, with its own exit code', async () => {
    const id = await run('trap "echo bye; exit 0" TERM; echo up; while true; do sleep 0.1; done');
    await box.rt.stopContainer(id, 5);
    const s = await box.rt.containerStatus(id);
    expect(s).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0, reason: 'Completed' });
    expect(await readLog(id)).toContain('bye');
  });

  it('StopContainer kills a process that ignores SIGTERM when the timeout runs out (137)', async () => {
    const id = await run('trap "" TERM; echo up; while true; do sleep 0.1; done');
    await box.rt.stopContainer(id, 1);
    expect(await box.rt.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 137, reason: 'Error' });
  });

  it('ExecSync with timeout 0 has no deadline (kubelet passes 0 for exec hooks)', async () => {
    const id = await run('echo up; while true; do sleep 1; done');
    const r = await box.rt.execSync(id, ['sh', '-c', 'sleep 0.6; echo done'], 0);
    expect({ exitCode: r.exitCode, out: r.stdout.toString() }).toEqual({ exitCode: 0, out: 'done\n' });
    await box.rt.stopContainer(id, 0);
  });
});
