// The service-manager watchdog (spec 002 §8): the XState machine on a
// simulated clock, and a real agent process notifying a real datagram socket.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { afterAll, describe, expect, it } from 'vitest';
import { SimControlClient } from '../../src/nodeagent/runtime/client.js';
import { gatedWatchdogPeriodMs, startWatchdog, watchdogPeriodMs } from '../../src/nodeagent/watchdog.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';

describe('watchdog period', () => {
  it('reads WATCHDOG_USEC: unset or 0 disables, below 1.0 s is refused, another pid is ignored', () => {
    expect(watchdogPeriodMs({})).toBeUndefined();
    expect(watchdogPeriodMs({ WATCHDOG_USEC: '0', NOTIFY_SOCKET: '/x' })).toBeUndefined();
    expect(watchdogPeriodMs({ WATCHDOG_USEC: '15000000' })).toBeUndefined();
    expect(watchdogPeriodMs({ WATCHDOG_USEC: '1500000', NOTIFY_SOCKET: '/x' })).toBe(1500);
    expect(watchdogPeriodMs({ WATCHDOG_USEC: '15000000', NOTIFY_SOCKET: '/x', WATCHDOG_PID: '1' }, 2)).toBeUndefined();
    expect(() => watchdogPeriodMs({ WATCHDOG_USEC: '999999', NOTIFY_SOCKET: '/x' })).toThrow(/minimum supported: 1\.0s/);
    expect(() => watchdogPeriodMs({ WATCHDOG_USEC: '15s', NOTIFY_SOCKET: '/x' })).toThrow(/microseconds/);
  });
});

describe('READY=1 without a watchdog (kubelet notifies systemd regardless)', () => {
  const run = (env: NodeJS.ProcessEnv, enabled?: boolean) => {
    const sim = new SimulatedClock();
    const sent: string[] = [];
    const w = startWatchdog({ env, enabled, healthy: () => true, notify: (m) => sent.push(m), clock: { now: () => sim.now(), setTimeout: (f, ms) => sim.setTimeout(f, ms), clearTimeout: (id) => sim.clearTimeout(id as number) }, log: () => {} });
    w.ready();
    sim.increment(60_000);
    return { sent, state: w.state() };
  };
  it('sends READY=1 once and no keep-alive when WATCHDOG_USEC is unset, 0, or for another pid', () => {
    for (const env of [{ NOTIFY_SOCKET: '/x' }, { NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '0' }, { NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '2000000', WATCHDOG_PID: '1' }]) {
      expect(run(env)).toEqual({ sent: ['READY=1'], state: 'ReadyOnly' });
    }
  });
  it('with the SystemdWatchdog gate off ignores WATCHDOG_USEC entirely (even one below 1.0 s) and still sends READY=1', () => {
    expect(() => gatedWatchdogPeriodMs({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '500000' }, false)).not.toThrow();
    expect(run({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '500000' }, false)).toEqual({ sent: ['READY=1'], state: 'ReadyOnly' });
    expect(run({ NOTIFY_SOCKET: '/x', WATCHDOG_USEC: '2000000' }, false).sent).toEqual(['READY=1']);
  });
  it('sends nothing without NOTIFY_SOCKET', () => {
    expect(run({}).sent).toEqual([]);
  });
});

describe('watchdog machine (simulated clock)', () => {
  it('sends READY=1 then WATCHDOG=1 every half period while healthy, none while unhealthy', () => {
    const sim = new SimulatedClock();
    const sent: string[] = [];
    let healthy = true;
    const w = startWatchdog({
      env: { WATCHDOG_USEC: '10000000', NOTIFY_SOCKET: '/x' },
      healthy: () => healthy,
      notify: (m) => sent.push(`${sim.now()}:${m}`),
      clock: { now: () => sim.now(), setTimeout: (f, ms) => sim.setTimeout(f, ms), clearTimeout: (id) => sim.clearTimeout(id as number) },
      log: () => {},
    });
    sim.increment(20_000);
    expect(sent).toEqual([]); // nothing before ready
    w.ready();
    expect(sent).toEqual(['20000:READY=1', '20000:WATCHDOG=1']);
    sim.increment(5_000);
    sim.increment(5_000);
    expect(sent.slice(2)).toEqual(['25000:WATCHDOG=1', '30000:WATCHDOG=1']);
    healthy = false;
    for (let i = 0; i < 4; i++) sim.increment(5_000);
    expect(sent).toHaveLength(4);
    expect(w.state()).toBe('Unhealthy');
    healthy = true;
    sim.increment(5_000);
    expect(sent.at(-1)).toBe('55000:WATCHDOG=1');
    w.stop();
    sim.increment(50_000);
    expect(sent).toHaveLength(5);
  });
});

// A receiver on a Unix datagram socket (node:dgram has no AF_UNIX; python3 plays the service manager)
function notifyReceiver(path: string): { child: ChildProcess; lines: string[]; ready: Promise<void> } {
  const code = `import socket,sys\ns=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\nprint("bound",flush=True)\nwhile True:\n  d=s.recv(4096)\n  for l in d.decode().split("\\n"):\n    if l: print(l,flush=True)\n`;
  const child = spawn('python3', ['-c', code, path], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let buf = '';
  const ready = new Promise<void>((resolve) => {
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop()!;
      for (const p of parts) p === 'bound' ? resolve() : lines.push(p);
    });
  });
  return { child, lines, ready };
}

const hasPython = (() => {
  try {
    return spawn('python3', ['-c', '0']).pid !== undefined;
  } catch {
    return false;
  }
})();

describe.runIf(hasPython)('watchdog of a real agent over NOTIFY_SOCKET', () => {
  let agent: AgentProcess | undefined;
  let dir: string;
  let rx: ReturnType<typeof notifyReceiver> | undefined;
  afterAll(async () => {
    await agent?.stop();
    rx?.child.kill();
    if (agent) await rm(agent.dir, { recursive: true, force: true });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('sends READY=1 and keep-alives, and stops them once the runtime is unhealthy', async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-notify-'));
    const sock = join(dir, 'notify.sock');
    rx = notifyReceiver(sock);
    await rx.ready;
    agent = await startAgentProcess(undefined, { nodeName: 'wd', config: { authorization: { mode: 'AlwaysAllow' } }, env: { NOTIFY_SOCKET: sock, WATCHDOG_USEC: '1000000' } });
    const until = async (f: () => boolean, what: string) => {
      for (let i = 0; i < 300 && !f(); i++) await new Promise((r) => setTimeout(r, 100));
      if (!f()) throw new Error(`${what}: ${rx!.lines.join(',')}\n${agent!.output()}`);
    };
    await until(() => rx!.lines.includes('READY=1'), 'READY=1');
    await until(() => rx!.lines.filter((l) => l === 'WATCHDOG=1').length >= 3, 'keep-alives');
    const ctl = new SimControlClient(join(agent.rootDir, 'runtime-sim.sock'));
    await ctl.setFaults([{ method: 'Status', code: 14, message: 'down' }]);
    ctl.close();
    await until(() => /container runtime is down|ContainerRuntimeNotReady/.test(agent!.output()) || false, 'unhealthy noticed');
    // once the agent has seen the failure, the count stops growing (allow the one in flight)
    await new Promise((r) => setTimeout(r, 1500));
    const frozen = rx.lines.filter((l) => l === 'WATCHDOG=1').length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(rx.lines.filter((l) => l === 'WATCHDOG=1').length).toBe(frozen);
  });

  it('with the SystemdWatchdog gate off starts despite WATCHDOG_USEC=500000 and sends READY=1 (Type=notify needs it), no keep-alives', async () => {
    const sock = join(dir, 'notify2.sock');
    const rx2 = notifyReceiver(sock);
    await rx2.ready;
    const a = await startAgentProcess(undefined, { nodeName: 'wd2', config: { authorization: { mode: 'AlwaysAllow' }, featureGates: { SystemdWatchdog: false } }, env: { NOTIFY_SOCKET: sock, WATCHDOG_USEC: '500000' } });
    try {
      for (let i = 0; i < 300 && !rx2.lines.includes('READY=1'); i++) await new Promise((r) => setTimeout(r, 100));
      expect(rx2.lines).toContain('READY=1');
      await new Promise((r) => setTimeout(r, 1500));
      expect(rx2.lines.filter((l) => l === 'WATCHDOG=1')).toEqual([]);
    } finally {
      rx2.child.kill();
      await a.stop();
      await rm(a.dir, { recursive: true, force: true });
    }
  });
});
