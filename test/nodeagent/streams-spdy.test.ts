// exec, attach, cp and port-forward over SPDY/3.1 upgrades (docs/nodeagent.md "Streams"):
// the real kubectl 1.32 forced to SPDY (KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false,
// KUBECTL_PORT_FORWARD_WEBSOCKETS=false), through the API server (authentication,
// authorization, admission) and the TLS front's hand-over (docs/tls.md "SPDY upgrades")
// to the agent's SPDY streams — with the TLS front in the main process (the test
// server's default, `--tls-workers 0`) and in a TLS worker process.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually as waitFor } from '../helpers/eventually.js';
import { grantPodReader, kubectlInTerminal, kubectlRun, podRunning, startStreamsEnv, stopStreamsEnv, type StreamsEnv } from '../helpers/node-streams.js';

const SPDY_ENV = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };
const kubectl = (kubeconfig: string, args: string[], stdin?: string) => kubectlRun(kubeconfig, args, stdin, SPDY_ENV);

for (const tlsWorkers of [0, 1]) {
  describe(`over SPDY/3.1 (--tls-workers ${tlsWorkers})`, () => {
    let e: StreamsEnv;
    const eventually = <T>(f: () => Promise<T>, what: string, ms = 45_000) => waitFor(f, what, { timeoutMs: ms, intervalMs: 200, context: () => e?.agent.output() ?? '' });

    beforeAll(async () => {
      e = await startStreamsEnv({ tlsWorkers });
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'talker', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.3; done'] }] } };
      expect((await e.ts.request('POST', '/api/v1/namespaces/default/pods', { body: pod })).status).toBe(201);
      await podRunning(e.ts, 'talker', eventually);
    }, 90_000);

    afterAll(() => stopStreamsEnv(e ?? {}));

    it.concurrent('kubectl exec: stdout, stderr and the exit code', async () => {
      const r = await kubectl(e.admin, ['exec', 'talker', '--', 'sh', '-c', 'echo hi; echo oops >&2; exit 3']);
      expect(r.stdout).toBe('hi\n');
      expect(r.stderr).toContain('oops\n');
      expect(r.stderr).toContain('command terminated with exit code 3');
      expect(r.code).toBe(3);
    });

    it.concurrent('kubectl exec carries a large output whole (≈ 7 MB through the hand-over and the relay)', async () => {
      const r = await kubectl(e.admin, ['exec', 'talker', '--', 'seq', '1', '1000000']);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.split('\n');
      expect(lines).toHaveLength(1_000_001);
      expect(lines[999_999]).toBe('1000000');
    });

    it.runIf(existsSync('/usr/bin/script')).concurrent('kubectl exec -it: a terminal (a resize stream, no stderr stream) and the exit code', async () => {
      const r = await kubectlInTerminal(e.admin, "exec -it talker -- sh -c 'echo hi; exit 3'", SPDY_ENV);
      expect(r.out).toContain('hi');
      expect(r.out).toContain('command terminated with exit code 3');
      expect(r.code).toBe(3);
    });

    it.concurrent('kubectl exec -i: stdin to the command and its end', async () => {
      const r = await kubectl(e.admin, ['exec', '-i', 'talker', '--', 'cat'], 'hello\nworld\n');
      expect(r.stderr).toBe('');
      expect(r.stdout).toBe('hello\nworld\n');
      expect(r.code).toBe(0);
    });

    it.concurrent('kubectl cp into the pod and back out of it', async () => {
      const local = join(e.dir, 'in.txt');
      const back = join(e.dir, 'out.txt');
      const content = 'a line\n'.repeat(5000);
      await writeFile(local, content);
      const up = await kubectl(e.admin, ['cp', local, `talker:/tmp/spdy-cp-${tlsWorkers}.txt`]);
      expect(up.stderr).toBe('');
      expect(up.code).toBe(0);
      const down = await kubectl(e.admin, ['cp', `talker:/tmp/spdy-cp-${tlsWorkers}.txt`, back]);
      expect(down.code, down.stderr).toBe(0);
      expect(await readFile(back, 'utf8')).toBe(content);
    });

    it.concurrent('kubectl attach: the container\'s output', async () => {
      const child = spawn('kubectl', ['--kubeconfig', e.admin, 'attach', 'talker'], { env: { ...process.env, ...SPDY_ENV } });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      try {
        await eventually(async () => /tick \d+\n/.test(out), `attached output (kubectl: ${err})`, 20_000);
      } finally {
        child.kill('SIGTERM');
      }
    });

    // 300 connections: 600 streams whose header blocks reach well past deflate's 32 KiB window (streaming/spdy.ts)
    it.concurrent('kubectl port-forward: bytes both ways, 300 connections one after another in one session', async () => {
      const child = spawn('kubectl', ['--kubeconfig', e.admin, 'port-forward', 'pod/talker', `:${e.listenPort}`], { env: { ...process.env, ...SPDY_ENV } });
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      try {
        const m = await eventually(async () => /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out), `kubectl forwarding (${err})`, 20_000);
        for (let i = 0; i < 300; i++) {
          const word = `w${i}`;
          const answer = await new Promise<string>((resolve, reject) => {
            const sock = connect(Number(m[1]), '127.0.0.1', () => sock.write(word));
            sock.on('data', (d) => {
              resolve(d.toString());
              sock.end();
            });
            sock.on('error', (e) => reject(new Error(`${e.message}; kubectl: ${out} ${err}`)));
          });
          expect(answer).toBe(`pong:${word}`);
        }
      } finally {
        child.kill('SIGTERM');
      }
      expect(err).not.toMatch(/error|lost connection/i);
    });

    it.concurrent("answers 403 with kube's negotiation message when no protocol is shared", async () => {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest({
          host: '127.0.0.1',
          port: e.ts.server.port,
          method: 'POST',
          path: '/api/v1/namespaces/default/pods/talker/exec?command=true&stdout=true',
          headers: { connection: 'Upgrade', upgrade: 'SPDY/3.1', 'x-stream-protocol-version': 'v9.channel.k8s.io' },
          ca: e.ts.server.caPem,
          cert: e.ts.server.adminCertPem,
          key: e.ts.server.adminKeyPem,
        });
        req.on('upgrade', () => reject(new Error('upgraded')));
        req.on('response', (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(403);
      expect(body).toContain('unable to upgrade: unable to negotiate protocol: client supports [v9.channel.k8s.io]');
    });

    it.concurrent('answers 404 for a missing pod', async () => {
      const r = await kubectl(e.admin, ['exec', 'nosuch', '--', 'true']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('pods "nosuch" not found');
    });

    it.concurrent('refuses a user without create pods/exec with 403', async () => {
      await grantPodReader(e.ts, 'alice');
      await eventually(async () => (await kubectl(e.alice, ['get', 'pod', 'talker'])).code === 0, 'alice reads pods');
      const r = await kubectl(e.alice, ['exec', 'talker', '--', 'true']);
      expect(r.code).not.toBe(0);
      // SPDY asks with POST: kube's message for the create verb on the sub-resource
      expect(r.stderr).toContain('pods "talker" is forbidden: User "alice" cannot create resource "pods/exec" in API group "" in the namespace "default"');
    });
  });
}
