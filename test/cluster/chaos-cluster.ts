// Real `orch server` processes forming a 3-member cluster on loopback, for
// the chaos test and bench/chaos.ts: start, SIGKILL, SIGSTOP/SIGCONT, the
// fault-injection endpoint (partitions, clock jumps; src/raft/faults.ts,
// only served with --enable-fault-injection), /raftz, and an HTTPS client
// authenticated as the admin.

import { spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadServiceAccountKeys } from '../../src/auth/authn/sa-keys.js';
import { ensurePki } from '../../src/server/pki.js';
import { bundleOrch } from '../helpers/bundle.js';
import { freePort } from '../helpers/ports.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface Member {
  name: string;
  apiPort: number;
  peerPort: number;
  faultPort: number;
  dataDir: string;
  proc?: ChildProcess;
  paused: boolean;
  agent: Agent;
  log: string[];
}

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ChaosCluster {
  readonly members: Member[] = [];
  private tls = { ca: '', cert: '', key: '' };
  private root = '';
  private initialCluster = '';
  /** the esbuild bundle members start from (undefined: through tsx from source) */
  private entry: string | undefined;

  constructor(private readonly tickMs = 50) {}

  async init(names = ['m1', 'm2', 'm3']): Promise<void> {
    this.root = await mkdtemp(join(tmpdir(), 'orch-chaos-'));
    for (const name of names) {
      this.members.push({
        name,
        apiPort: await freePort(),
        peerPort: await freePort(),
        faultPort: await freePort(),
        dataDir: join(this.root, name),
        paused: false,
        agent: new Agent({ keepAlive: true, maxSockets: 16 }),
        log: [],
      });
    }
    this.initialCluster = this.members.map((m) => `${m.name}=127.0.0.1:${m.peerPort}`).join(',');
    const pkiDir = join(this.root, 'pki');
    // what deploy/init-pki.ts does, in this process: a tsx process of its own took 20+ s on the loaded machine
    await ensurePki(pkiDir, { hosts: ['localhost', '127.0.0.1', '::1'] });
    loadServiceAccountKeys({ defaultKeyPath: join(pkiDir, 'sa.key') });
    for (const m of this.members) await cp(pkiDir, join(m.dataDir, 'pki'), { recursive: true });
    // members start from one bundle: through tsx, four start-ups were most of the short run's time
    this.entry = await bundleOrch(join(this.root, 'bundle')).catch(() => undefined);
    this.tls = {
      ca: await readFile(join(pkiDir, 'ca.crt'), 'utf8'),
      cert: await readFile(join(pkiDir, 'admin.crt'), 'utf8'),
      key: await readFile(join(pkiDir, 'admin.key'), 'utf8'),
    };
  }

  start(m: Member): void {
    const p = spawn(
      process.execPath,
      [
        ...(this.entry ? [this.entry] : ['--import', 'tsx', 'src/cli/main.ts']), 'server',
        '--name', m.name, '--initial-cluster', this.initialCluster,
        '--data-dir', m.dataDir, '--secure-port', String(m.apiPort), '--peer-port', String(m.peerPort),
        '--enable-fault-injection', '--fault-injection-port', String(m.faultPort),
        '--raft-tick', `${this.tickMs}ms`, '--tls-workers', '0',
      ],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (c: Buffer) => {
      m.log.push(c.toString());
      if (m.log.length > 200) m.log.shift();
    };
    p.stdout!.on('data', keep);
    p.stderr!.on('data', keep);
    m.proc = p;
    m.paused = false;
  }

  async kill(m: Member): Promise<void> {
    const p = m.proc;
    m.proc = undefined;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    if (m.paused) p.kill('SIGCONT');
    m.paused = false;
    await exited;
    m.agent.destroy();
    m.agent = new Agent({ keepAlive: true, maxSockets: 16 });
  }

  pause(m: Member): void {
    if (!m.proc || m.paused) return;
    m.proc.kill('SIGSTOP');
    m.paused = true;
  }

  resume(m: Member): void {
    if (!m.proc || !m.paused) return;
    m.proc.kill('SIGCONT');
    m.paused = false;
  }

  live(): Member[] {
    return this.members.filter((m) => m.proc);
  }

  api(m: Member, method: string, path: string, body?: unknown, timeoutMs = 15_000): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = httpsRequest(
        {
          host: '127.0.0.1', port: m.apiPort, method, path, ...this.tls, agent: m.agent, timeout: timeoutMs,
          headers: data ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } : {},
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let parsed: Record<string, unknown> = {};
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
            } catch {
              // not JSON
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('client timeout')));
      req.on('error', reject);
      req.end(data);
    });
  }

  /** a streaming GET (a watch); the caller reads and ends it */
  stream(m: Member, path: string, onResponse: (res: IncomingMessage) => void, onError: (e: Error) => void): () => void {
    const req = httpsRequest({ host: '127.0.0.1', port: m.apiPort, method: 'GET', path, ...this.tls, agent: false }, onResponse);
    req.on('error', onError);
    req.end();
    return () => req.destroy();
  }

  /** PUT /faults (rules) or DELETE /faults (undefined) on a member's fault endpoint */
  faults(m: Member, rules?: unknown): Promise<void> {
    return this.admin(m, rules === undefined ? 'DELETE' : 'PUT', '/faults', rules);
  }

  /** jump the member's wall clock to `offsetMs` from the real time */
  clock(m: Member, offsetMs: number): Promise<void> {
    return this.admin(m, 'PUT', '/clock', { offsetMs });
  }

  private admin(m: Member, method: string, path: string, body: unknown): Promise<void> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? '' : JSON.stringify(body);
      const req = httpRequest({ host: '127.0.0.1', port: m.faultPort, method, path, timeout: 5000, headers: { 'Content-Length': Buffer.byteLength(data) } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${path} ${res.statusCode}`))));
      });
      req.on('timeout', () => req.destroy(new Error(`${path}: no answer`)));
      req.on('error', reject);
      req.end(data);
    });
  }

  async raftz(m: Member): Promise<{ leader: string; term: number } | undefined> {
    if (!m.proc || m.paused) return undefined;
    try {
      const r = await this.api(m, 'GET', '/raftz', undefined, 2000);
      return r.status === 200 ? (r.body as { leader: string; term: number }) : undefined;
    } catch {
      return undefined;
    }
  }

  async waitServing(m: Member, ms = 180_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      // a member that exited will not come up: say so now rather than after the deadline
      if (!m.proc || m.proc.exitCode !== null || m.proc.signalCode !== null) throw new Error(`${m.name} exited while starting:\n${m.log.join('')}`);
      const s = await this.raftz(m);
      if (s && s.leader) return;
      await sleep(200);
    }
    throw new Error(`${m.name} did not come up:\n${m.log.join('')}`);
  }

  async findLeader(): Promise<Member | undefined> {
    for (const m of this.live()) {
      const s = await this.raftz(m);
      if (s?.leader) return this.members.find((x) => x.name === s.leader && x.proc && !x.paused);
    }
    return undefined;
  }

  async close(): Promise<void> {
    for (const m of this.members) {
      await this.kill(m);
      m.agent.destroy();
    }
    if (this.root) await rm(this.root, { recursive: true, force: true });
  }
}
