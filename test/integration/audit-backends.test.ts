// Audit backends (issue 16 item 3, docs/audit.md): a real webhook on loopback
// over TLS receiving EventList batches (and retried after a failure); a
// webhook that never answers fills the bounded buffer, which drops and counts
// while requests are still served; a log path that cannot be written and a
// full disk (/dev/full) do not stop the server; a bad policy or webhook file
// stops the start with an error naming the file and field; `--audit-log-path -`
// writes to standard output through the real CLI.

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { ensurePki, issueClientCertificate, loadPki } from '../../src/server/pki.js';
import type { RunningServer } from '../../src/server/server.js';
import { eventually } from '../helpers/eventually.js';
import { freePort } from '../helpers/ports.js';
import { rawRequest, startTestServer } from '../helpers/server.js';

const POLICY = 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'orch-audit-be-'));
  dirs.push(d);
  await writeFile(join(d, 'policy.yaml'), POLICY);
  return d;
}

interface Received {
  body: { kind: string; apiVersion: string; items: { auditID: string; stage: string; kind: string }[] };
  peer: string;
}

/** an audit receiver over TLS that requires a client certificate */
async function startReceiver(dir: string, answer: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  const pki = await ensurePki(join(dir, 'hook-pki'), { hosts: ['127.0.0.1'] });
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let posts = 0;
  const server: Server = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem, ca: pki.ca.certPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      posts++;
      const peer = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN);
      const n = posts;
      if (res.writableEnded) return;
      answer(req, res, n);
      if (res.statusCode < 300 && res.writableEnded) received.push({ body: JSON.parse(body) as Received['body'], peer });
    });
  });
  server.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = await issueClientCertificate(pki, { commonName: 'orch-audit' });
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const kubeconfig = join(dir, 'audit-webhook.kubeconfig');
  await writeFile(
    kubeconfig,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: https://127.0.0.1:${(server.address() as AddressInfo).port}/audit\n    certificate-authority-data: ${b64(pki.ca.certPem)}\nusers:\n- name: api\n  user:\n    client-certificate-data: ${b64(client.certPem)}\n    client-key-data: ${b64(client.keyPem)}\ncontexts:\n- name: c\n  context: {cluster: hook, user: api}\ncurrent-context: c\n`,
  );
  return {
    kubeconfig,
    received,
    posts: () => posts,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

const metric = (text: string, line: string): number => {
  const m = new RegExp(`^${line.replace(/[{}"=,]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
};

describe('audit webhook backend', () => {
  it('delivers EventList batches, retrying a failed POST', async () => {
    const dir = await tempDir();
    const hook = await startReceiver(dir, (_req, res, n) => {
      // the first POST fails: the batch must come again
      res.statusCode = n === 1 ? 503 : 200;
      res.end(n === 1 ? 'not now' : '{}');
    });
    const t = await startTestServer({
      audit: { policyFile: join(dir, 'policy.yaml'), webhookConfigFile: hook.kubeconfig, webhookBatchMaxSize: 4, webhookBatchMaxWaitMs: 50, webhookInitialBackoffMs: 20 },
    });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await t.request('GET', `/api/v1/namespaces/default/configmaps?i=${i}`)).headers['audit-id'] as string);
      await eventually(async () => {
        const got = new Set(hook.received.flatMap((r) => r.body.items.map((e) => `${e.auditID}/${e.stage}`)));
        return ids.every((id) => got.has(`${id}/RequestReceived`) && got.has(`${id}/ResponseComplete`));
      }, 'every event delivered');
      expect(hook.posts()).toBeGreaterThan(hook.received.length);
      for (const r of hook.received) {
        expect(r.body).toMatchObject({ kind: 'EventList', apiVersion: 'audit.orch.io/v1' });
        expect(r.body.items.length).toBeGreaterThan(0);
        expect(r.body.items.length).toBeLessThanOrEqual(4);
        expect(r.body.items.every((e) => e.kind === 'Event')).toBe(true);
        expect(r.peer).toBe('orch-audit');
      }
      // each event once, however the batches were cut and retried
      const all = hook.received.flatMap((r) => r.body.items.map((e) => `${e.auditID}/${e.stage}`)).filter((k) => ids.some((id) => k.startsWith(id)));
      expect(new Set(all).size).toBe(all.length);
    } finally {
      await t.stop();
      await hook.close();
    }
  });

  it('a webhook that never answers: the full buffer drops and counts, requests are still served', async () => {
    const dir = await tempDir();
    const hook = await startReceiver(dir, () => {
      /* never answers */
    });
    const t = await startTestServer({
      audit: { policyFile: join(dir, 'policy.yaml'), webhookConfigFile: hook.kubeconfig, webhookBufferSize: 3, webhookBatchMaxSize: 1, webhookBatchMaxWaitMs: 0 },
    });
    try {
      expect((await t.request('GET', '/api/v1/namespaces')).status).toBe(200);
      await eventually(async () => hook.posts() >= 1, 'the first batch is posted (and hangs)');
      for (let i = 0; i < 10; i++) expect((await t.request('GET', '/api/v1/namespaces')).status).toBe(200);
      const m = (await t.request('GET', '/metrics')).text;
      // 11 requests × 2 events (and the scrape's first), 3 buffered, 1 in flight: at least 16 dropped
      expect(metric(m, 'apiserver_audit_error_total{plugin="buffered"}')).toBeGreaterThanOrEqual(16);
      expect(metric(m, 'orch_audit_dropped_events_total{backend="webhook",reason="buffer_full"}')).toBeGreaterThanOrEqual(16);
      expect(metric(m, 'orch_audit_buffered_events{backend="webhook"}')).toBe(3);
    } finally {
      await hook.close();
      await t.stop();
    }
  });
  it('a webhook that is down: each batch is retried, then dropped and counted; requests are served', async () => {
    const dir = await tempDir();
    const port = await freePort(); // nothing listens there
    const hook = join(dir, 'down.kubeconfig');
    await writeFile(hook, `apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:${port}/audit\ncontexts:\n- name: c\n  context: {cluster: x}\ncurrent-context: c\n`);
    const logs: string[] = [];
    const t = await startTestServer({
      log: (m) => logs.push(m),
      audit: { policyFile: join(dir, 'policy.yaml'), webhookConfigFile: hook, webhookBatchMaxSize: 100, webhookBatchMaxWaitMs: 0, webhookInitialBackoffMs: 5 },
    });
    try {
      for (let i = 0; i < 3; i++) expect((await t.request('GET', '/api/v1/namespaces')).status).toBe(200);
      await eventually(
        async () => metric((await t.request('GET', '/metrics')).text, 'orch_audit_dropped_events_total{backend="webhook",reason="webhook_error"}') >= 6,
        'webhook failures counted',
      );
      expect(metric((await t.request('GET', '/metrics')).text, 'apiserver_audit_error_total{plugin="webhook"}')).toBeGreaterThanOrEqual(6);
      expect(logs.some((l) => /audit webhook: \d+ events not written: .*ECONNREFUSED/.test(l))).toBe(true);
    } finally {
      await t.stop();
    }
  });
});

describe('audit log write failures never stop serving', () => {
  it('a log path that cannot be opened: the server starts, serves, says so and counts', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'a-file'), '');
    const logs: string[] = [];
    const t = await startTestServer({ log: (m) => logs.push(m), audit: { policyFile: join(dir, 'policy.yaml'), logPath: join(dir, 'a-file', 'audit.log') } });
    try {
      expect(logs.some((l) => l.includes('cannot open --audit-log-path') && l.includes('a-file/audit.log'))).toBe(true);
      for (let i = 0; i < 3; i++) expect((await t.request('GET', '/api/v1/namespaces')).status).toBe(200);
      await eventually(async () => metric((await t.request('GET', '/metrics')).text, 'orch_audit_dropped_events_total{backend="log",reason="write_error"}') >= 6, 'write errors counted');
      expect(metric((await t.request('GET', '/metrics')).text, 'apiserver_audit_error_total{plugin="log"}')).toBeGreaterThanOrEqual(6);
    } finally {
      await t.stop();
    }
  });

  it('a full disk (/dev/full): every write fails, the server serves on', async () => {
    const dir = await tempDir();
    const t = await startTestServer({ audit: { policyFile: join(dir, 'policy.yaml'), logPath: '/dev/full' } });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await t.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: `full-${i}` } } });
        expect(r.status).toBe(201);
      }
      await eventually(async () => metric((await t.request('GET', '/metrics')).text, 'orch_audit_dropped_events_total{backend="log",reason="write_error"}') >= 6, 'ENOSPC counted');
    } finally {
      await t.stop();
    }
  });
});

describe('audit configuration errors stop the start', () => {
  it('a bad policy names the file and the field', async () => {
    const dir = await tempDir();
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Everything\n    omitStages: [Later]\n');
    await expect(startTestServer({ audit: { policyFile: bad, logPath: join(dir, 'a.log') } })).rejects.toThrow(
      `--audit-policy-file: ${bad}: rules[0].level: Unsupported value: "Everything"`,
    );
    await expect(startTestServer({ audit: { policyFile: bad, logPath: join(dir, 'a.log') } })).rejects.toThrow(/rules\[0\]\.omitStages\[0\]: Invalid value: "Later"/);
  });

  it('a webhook file without a server names the file and the field', async () => {
    const dir = await tempDir();
    const hook = join(dir, 'hook.kubeconfig');
    await writeFile(hook, 'apiVersion: v1\nkind: Config\nclusters:\n- name: x\n  cluster: {}\n');
    await expect(startTestServer({ audit: { policyFile: join(dir, 'policy.yaml'), webhookConfigFile: hook } })).rejects.toThrow(
      `--audit-webhook-config-file: ${hook}: clusters[].cluster.server is required`,
    );
  });
});

describe('orch server --audit-log-path -', () => {
  it('writes events to standard output as JSON lines', async () => {
    const dir = await tempDir();
    const dataDir = join(dir, 'data');
    const child: ChildProcess = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', dataDir, '--secure-port', '0', '--tls-workers', '0', '--audit-policy-file', join(dir, 'policy.yaml'), '--audit-log-path', '-'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout!.on('data', () => {
          const m = /serving on https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        child.on('exit', (code) => reject(new Error(`server exited early (${code}): ${out}`)));
      });
      const pki = await loadPki(join(dataDir, 'pki'));
      const srv = { port, caPem: pki.ca.certPem, adminCertPem: pki.admin.certPem, adminKeyPem: pki.admin.keyPem } as RunningServer;
      const r = await rawRequest(srv, 'GET', '/api/v1/namespaces/default');
      expect(r.status).toBe(200);
      const id = r.headers['audit-id'] as string;
      await eventually(async () => out.split('\n').filter((l) => l.includes(id)).length >= 2, 'events on stdout');
      const evs = out
        .split('\n')
        .filter((l) => l.includes(id))
        .map((l) => JSON.parse(l) as { stage: string; objectRef: unknown });
      expect(evs.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
      expect(evs[1]!.objectRef).toEqual({ resource: 'namespaces', name: 'default', apiVersion: 'v1' });
    } finally {
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    }
  });
});
