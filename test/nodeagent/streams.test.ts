// Streaming sub-resources end to end (docs/nodeagent.md "Streams"): kubectl 1.32 →
// the API server (authorization) → the real `orch nodeagent` process (its own
// authentication of the API server's client certificate and a SubjectAccessReview)
// → the simulated runtime over gRPC, whose containers are real `sh -c` processes.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ensurePki, issueClientCertificate, loadPki } from '../../src/server/pki.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';
import { freePort } from '../helpers/ports.js';
import { grantPodReader, kubectlInTerminal, kubectlRun, podRunning, startStreamsEnv, stopStreamsEnv } from '../helpers/node-streams.js';
import type { AgentProcess } from '../helpers/nodeagent.js';
import type { TestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let admin: string;
let alice: string;
let dir: string;
let listener: Server;
let listenPort: number;

const kubectl = (kubeconfig: string, args: string[], stdin?: string) => kubectlRun(kubeconfig, args, stdin);

/** the agent acts on its own schedule: poll for up to 45 s, and show its output when it never happens */
const eventually = <T>(f: () => Promise<T>, what: string, ms = 45_000) => waitFor(f, what, { timeoutMs: ms, intervalMs: 200, context: () => agent?.output() ?? '' });
const pod = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { nodeName: 'node-a', ...spec } });
const running = (name: string) => podRunning(ts, name, eventually);

beforeAll(async () => {
  // the agent checks the API server's client certificate and asks the API server (SubjectAccessReview) whether it may;
  // started as the README starts it: no clientCAFile, so it trusts the cluster CA of its kubeconfig
  ({ ts, agent, admin, alice, dir, listener, listenPort } = await startStreamsEnv());
  for (const p of [
    pod('talker', { containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.3; done'] }] }),
    pod('two', { containers: [{ name: 'a', image: 'busybox', command: ['sh', '-c', 'echo from-a; sleep 3600'] }, { name: 'b', image: 'busybox', command: ['sleep', '3600'] }] }),
    pod('waiting', { initContainers: [{ name: 'init', image: 'busybox', command: ['sleep', '3600'] }], containers: [{ name: 'main', image: 'busybox', command: ['sleep', '3600'] }] }),
  ]) {
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: p })).status).toBe(201);
  }
  await running('talker');
  await running('two');
}, 90_000);

afterAll(() => stopStreamsEnv({ listener, agent, ts, dir }));

describe('pods/log', () => {
  it('serves the log with tailLines, timestamps and limitBytes', async () => {
    await eventually(async () => (await runKubectl(admin, ['logs', 'talker'])).stdout.includes('tick 2'), 'three lines logged');
    const all = await runKubectl(admin, ['logs', 'talker']);
    expect(all.code).toBe(0);
    expect(all.stdout).toMatch(/^tick 0\ntick 1\ntick 2\n/);
    const tail = await runKubectl(admin, ['logs', 'talker', '--tail=1']);
    expect(tail.stdout.trim().split('\n')).toHaveLength(1);
    expect(tail.stdout).toMatch(/^tick \d+\n$/);
    const stamped = await runKubectl(admin, ['logs', 'talker', '--timestamps', '--tail=2']);
    expect(stamped.stdout).toMatch(/^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z tick \d+\n){2}$/);
    const limited = await runKubectl(admin, ['logs', 'talker', '--limit-bytes=6']);
    expect(limited.stdout).toBe('tick 0');
    // tick 7 is written ≥ 2.1 s after tick 0 (a tick every 0.3 s): from then on tick 0 is older than 1 s
    await eventually(async () => (await runKubectl(admin, ['logs', 'talker'])).stdout.includes('tick 7'), 'eight lines logged');
    const since = await ts.request('GET', '/api/v1/namespaces/default/pods/talker/log?sinceSeconds=1');
    expect(since.status).toBe(200);
    expect(since.text).not.toMatch(/^tick 0\n/);
  });

  it('follows the log while the container writes (kubectl logs -f)', async () => {
    const before = (await runKubectl(admin, ['logs', 'talker', '--tail=1'])).stdout.trim();
    const last = Number(before.split(' ')[1]);
    const child = spawn('kubectl', ['--kubeconfig', admin, 'logs', '-f', 'talker', '--tail=1']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      // lines written after kubectl started arrive while it runs
      const lines = () => out.split('\n').length - 1;
      await eventually(async () => lines() >= 1, 'the first line', 20_000);
      // more lines keep arriving on the same response while the container writes them
      const seen = lines();
      await eventually(async () => lines() >= seen + 3, 'followed lines', 20_000);
      const numbers = out.trim().split('\n').map((l) => Number(l.split(' ')[1]));
      expect(numbers.length).toBeGreaterThanOrEqual(4);
      expect(numbers[0]).toBeGreaterThanOrEqual(last);
      for (let i = 1; i < numbers.length; i++) expect(numbers[i]).toBe(numbers[i - 1]! + 1);
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('needs a container name for a pod of two, and knows the valid ones', async () => {
    const r = await runKubectl(admin, ['logs', 'two', '-c', 'a']);
    expect(r.stdout).toBe('from-a\n');
    const bad = await ts.request('GET', '/api/v1/namespaces/default/pods/two/log');
    expect(bad.status).toBe(400);
    expect(bad.json().message).toBe('a container name must be specified for pod two, choose one of: [a b]');
    const invalid = await ts.request('GET', '/api/v1/namespaces/default/pods/two/log?container=zz');
    expect(invalid.status).toBe(400);
    expect(invalid.json().message).toBe('container zz is not valid for pod two');
    const prev = await ts.request('GET', '/api/v1/namespaces/default/pods/talker/log?previous=true');
    expect(prev.status).toBe(400);
    expect(prev.json().message).toMatch(/previous terminated container "main" in pod "talker" not found/);
  });
});

/** a request straight to the agent's HTTPS server with a client certificate */
function agentStatus(path: string, cert: { certPem: string; keyPem: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port: agent.port, path, rejectUnauthorized: false, cert: cert.certPem, key: cert.keyPem }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the agent\'s client CA without clientCAFile', () => {
  it('accepts certificates of its kubeconfig\'s cluster CA and refuses another CA\'s', async () => {
    const pki = await loadPki(join(ts.dataDir, 'pki'));
    const master = await issueClientCertificate(pki, { commonName: 'ops', organizations: ['system:masters'] });
    expect(await agentStatus('/containerLogs/default/talker/main?tailLines=1', master)).toBe(200);
    // a CA the cluster does not know, issuing a certificate with the same names
    const other = await ensurePki(join(dir, 'other-pki'));
    const forged = await issueClientCertificate(other, { commonName: 'ops', organizations: ['system:masters'] });
    expect(await agentStatus('/containerLogs/default/talker/main?tailLines=1', forged)).toBe(401);
  });
});

describe('pods/exec', () => {
  it('round-trips stdin (kubectl exec -i)', async () => {
    const r = await kubectl(admin, ['exec', '-i', 'talker', '--', 'cat'], 'hello\nworld\n');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('hello\nworld\n');
    expect(r.code).toBe(0);
  });

  it('carries a large output whole (kubectl exec of ≈ 7 MB: messages past 16 KiB go out as fragments)', async () => {
    const r = await kubectl(admin, ['exec', 'talker', '--', 'seq', '1', '1000000']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const want = `${Array.from({ length: 1_000_000 }, (_, i) => i + 1).join('\n')}\n`;
    expect(r.stdout.length).toBe(want.length);
    expect(createHash('sha256').update(r.stdout).digest('hex')).toBe(createHash('sha256').update(want).digest('hex'));
  });

  it('returns the exit code of the command and its output', async () => {
    const r = await kubectl(admin, ['exec', 'talker', '--', 'sh', '-c', 'echo hi; echo oops >&2; exit 3']);
    expect(r.stdout).toBe('hi\n');
    expect(r.stderr).toContain('oops\n');
    expect(r.stderr).toContain('command terminated with exit code 3');
    expect(r.code).toBe(3);
  });

  it.runIf(existsSync('/usr/bin/script'))('returns the exit code with a terminal too (kubectl exec -it)', async () => {
    // `script` gives kubectl a terminal, so it asks for tty=true (the simulator runs without a pty)
    const r = await kubectlInTerminal(admin, "exec -it talker -- sh -c 'echo hi; exit 3'");
    expect(r.out).toContain('hi');
    expect(r.out).toContain('command terminated with exit code 3');
    expect(r.code).toBe(3);
  });

  it('answers 404 for a missing pod and for a container the node has not created, 400 for an invalid one', async () => {
    const missingPod = await kubectl(admin, ['exec', 'nosuch', '--', 'true']);
    expect(missingPod.code).not.toBe(0);
    expect(missingPod.stderr).toContain('pods "nosuch" not found');
    const invalid = await kubectl(admin, ['exec', 'two', '-c', 'zz', '--', 'true']);
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toContain('container zz is not valid for pod two');
    // the init container runs forever: `main` does not exist on the node yet
    const ws = await wsOpen('/api/v1/namespaces/default/pods/waiting/exec?container=main&command=true&stdout=1', ['v5.channel.k8s.io']);
    expect(ws.status).toBe(404);
    expect(ws.body).toMatch(/container main of pod default\/waiting has not been created/);
  });

  it('refuses a user without pods/exec with 403', async () => {
    // alice may read pods (kubectl exec reads the pod first), not exec into them or read their logs
    await grantPodReader(ts, 'alice');
    await eventually(async () => (await kubectl(alice, ['get', 'pod', 'talker'])).code === 0, 'alice reads pods');
    const r = await kubectl(alice, ['exec', 'talker', '--', 'true']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/Forbidden|forbidden/);
    // the last attempt kubectl makes is SPDY (POST = create), after the WebSocket (GET = get) one
    expect(r.stderr).toMatch(/User "alice" cannot (get|create) resource "pods\/exec"/);
    const logs = await kubectl(alice, ['logs', 'talker']);
    expect(logs.stderr).toContain('User "alice" cannot get resource "pods/log"');
  });
});

/** a raw WebSocket to the API server as admin: the handshake's status and body, or the open socket */
function wsOpen(path: string, protocols: string[]): Promise<{ status: number; body: string; ws?: WebSocket; protocol?: string; early: Buffer[]; trace: string[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`wss://127.0.0.1:${ts.server.port}${path}`, protocols, { ca: ts.server.caPem, cert: ts.server.adminCertPem, key: ts.server.adminKeyPem });
    const early: Buffer[] = [];
    // what happened to the socket, with times, for a failure's message
    const t0 = Date.now();
    const trace: string[] = [];
    const note = (what: string) => trace.push(`+${Date.now() - t0} ms ${what}`);
    ws.on('upgrade', () => note('101'));
    ws.on('close', (code, reason) => note(`close ${code} ${reason.toString()}`));
    ws.on('message', (d) => {
      const b = Buffer.isBuffer(d) ? d : Buffer.from(d as ArrayBuffer);
      note(`message of ${b.length} bytes on channel ${b[0]}`);
      early.push(b);
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, early, trace }));
    });
    ws.once('open', () => resolve({ status: 101, body: '', ws, protocol: ws.protocol, early, trace }));
    ws.on('error', (e) => {
      note(`error ${e.message}`);
      reject(e);
    });
  });
}

describe('pods/attach and the channel protocol', () => {
  it('speaks v4 too, with the exit Status on the error channel', async () => {
    const r = await wsOpen('/api/v1/namespaces/default/pods/talker/exec?command=sh&command=-c&command=echo%20v4;%20exit%205&stdout=1&stderr=1', ['v4.channel.k8s.io']);
    expect(r.protocol).toBe('v4.channel.k8s.io');
    await new Promise((res) => r.ws!.once('close', res));
    const byChannel = (ch: number) => Buffer.concat(r.early.filter((m) => m[0] === ch).map((m) => m.subarray(1))).toString();
    expect(byChannel(1)).toBe('v4\n');
    const status = JSON.parse(byChannel(3)) as { status: string; reason: string; details: { causes: { reason: string; message: string }[] } };
    expect(status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '5' }] } });
  });

  it("reads booleans as kube does: the Python client's stdout=True, stdin=False, timestamps=True", async () => {
    const r = await wsOpen('/api/v1/namespaces/default/pods/talker/exec?command=sh&command=-c&command=echo%20py&stderr=True&stdin=False&stdout=True&tty=False', ['v4.channel.k8s.io']);
    await new Promise((res) => r.ws!.once('close', res));
    expect(Buffer.concat(r.early.filter((m) => m[0] === 1).map((m) => m.subarray(1))).toString()).toBe('py\n');
    const log = await ts.request('GET', '/api/v1/namespaces/default/pods/talker/log?timestamps=True&follow=False&tailLines=1');
    expect(log.status, log.text).toBe(200);
    expect(log.text).toMatch(/^\d{4}-\d\d-\d\dT[^ ]+Z tick \d+\n$/);
  });

  it('attaches to the container output', async () => {
    const r = await wsOpen('/api/v1/namespaces/default/pods/talker/attach?container=main&stdout=1', ['v5.channel.k8s.io']);
    expect(r.protocol).toBe('v5.channel.k8s.io');
    await eventually(async () => Buffer.concat(r.early.filter((m) => m[0] === 1).map((m) => m.subarray(1))).toString().match(/tick \d+\n/), 'attached output', 10_000);
    r.ws!.close();
  });
});

describe('pods/portforward', () => {
  it('works with kubectl port-forward (SPDY inside the WebSocket), a round trip per connection', async () => {
    const child = spawn('kubectl', ['--kubeconfig', admin, 'port-forward', 'pod/talker', `:${listenPort}`]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    try {
      const m = await eventually(async () => /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out), 'kubectl forwarding', 20_000).catch((e: Error) => {
        throw new Error(`${e.message.split('\n')[0]}: ${out} ${err}`);
      });
      const local = Number(m![1]);
      for (const word of ['one', 'two']) {
        const answer = await new Promise<string>((resolve, reject) => {
          const sock = connect(local, '127.0.0.1', () => sock.write(word));
          sock.on('data', (d) => {
            resolve(d.toString());
            sock.end();
          });
          sock.on('error', (e) => reject(new Error(`${e.message}; kubectl: ${out} ${err}; agent: ${agent.output().split('\n').filter((l) => /port-forward|server:/.test(l)).join('\n')}`)));
        });
        expect(answer).toBe(`pong:${word}`);
      }
    } finally {
      child.kill('SIGTERM');
    }
    expect(err).not.toMatch(/error|lost connection/i);
  });

  it('forwards a port of the pod over the WebSocket port-forward protocol', async () => {
    const r = await wsOpen(`/api/v1/namespaces/default/pods/talker/portforward?ports=${listenPort}&port=${listenPort}`, ['v4.channel.k8s.io']);
    expect(r.protocol).toBe('v4.channel.k8s.io');
    const ws = r.ws!;
    // the port prefix on the data (0) and error (1) channels, little-endian
    await waitFor(async () => r.early.length >= 2, 'port prefixes', { timeoutMs: 30_000, intervalMs: 200, context: () => `client: ${r.trace.join('; ')}\nagent: ${agent.output()}` });
    const prefix = Buffer.from([listenPort & 0xff, listenPort >> 8]);
    expect(r.early.slice(0, 2).map((m) => [m[0], m.subarray(1).equals(prefix)])).toEqual([[0, true], [1, true]]);
    ws.send(Buffer.concat([Buffer.from([0]), Buffer.from('ping')]));
    await eventually(async () => Buffer.concat(r.early.slice(2).filter((m) => m[0] === 0).map((m) => m.subarray(1))).toString() === 'pong:ping', 'forwarded answer', 30_000);
    ws.close();
  });

  it('reports a port nothing listens on on the error channel', async () => {
    // below the ephemeral range and in this worker's slice: no other test's listen(0) can take it meanwhile
    const dead = await freePort();
    const r = await wsOpen(`/api/v1/namespaces/default/pods/talker/portforward?port=${dead}`, ['v4.channel.k8s.io']);
    await new Promise((res) => r.ws!.once('close', res));
    const err = Buffer.concat(r.early.filter((m) => m[0] === 1).map((m) => m.subarray(1))).toString();
    expect(err).toContain(`an error occurred forwarding ${dead} -> ${dead}`);
  });
});

describe('services/proxy and pods/proxy', () => {
  it('reaches an HTTP server in a pod through its agent, also with kubectl proxy', async () => {
    const port = await freePort();
    const script = `exec ${process.execPath} -e 'require("http").createServer((q, r) => r.end("hello " + q.method + " " + q.url)).listen(${port}, "127.0.0.1")'`;
    const web = pod('web', { containers: [{ name: 'web', image: 'node', command: ['sh', '-c', script], ports: [{ name: 'http', containerPort: port }] }] });
    (web.metadata as Record<string, unknown>).labels = { app: 'web' };
    expect((await ts.request('POST', '/api/v1/namespaces/default/pods', { body: web })).status).toBe(201);
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] } };
    expect((await ts.request('POST', '/api/v1/namespaces/default/services', { body: svc })).status).toBe(201);
    await running('web');
    const r = await eventually(async () => {
      const x = await ts.request('GET', '/api/v1/namespaces/default/services/web:http/proxy/hi?x=1');
      return x.status === 200 && x;
    }, 'service proxy answers');
    expect(r.text).toBe('hello GET /hi?x=1');
    const byPod = await ts.request('GET', `/api/v1/namespaces/default/pods/web:${port}/proxy/p`);
    expect(byPod.text).toBe('hello GET /p');
    const child = spawn('kubectl', ['--kubeconfig', admin, 'proxy', '--port=0']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const m = await eventually(async () => /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(out), 'kubectl proxy', 20_000);
      const res = await fetch(`http://127.0.0.1:${m![1]}/api/v1/namespaces/default/services/web/proxy/via-kubectl`);
      expect(await res.text()).toBe('hello GET /via-kubectl');
    } finally {
      child.kill('SIGTERM');
    }
    const denied = await kubectl(alice, ['get', '--raw', '/api/v1/namespaces/default/services/web/proxy/']);
    expect(denied.stderr).toMatch(/forbidden/i);
  });
});

describe('nodes/proxy', () => {
  it('proxies to the agent (its healthz) and keeps the API server authorization', async () => {
    const r = await ts.request('GET', '/api/v1/nodes/node-a/proxy/healthz');
    expect(r.status).toBe(200);
    expect(r.text).toBe('ok');
    const raw = await runKubectl(admin, ['get', '--raw', '/api/v1/nodes/node-a/proxy/healthz']);
    expect(raw.stdout).toBe('ok');
    const denied = await kubectl(alice, ['get', '--raw', '/api/v1/nodes/node-a/proxy/healthz']);
    expect(denied.stderr).toMatch(/forbidden/i);
  });
});
