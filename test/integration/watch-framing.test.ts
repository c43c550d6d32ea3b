// Watch streams at the byte level (issue #11, spec 000 §2.5, §4.5): each
// event is one complete HTTP/1.1 chunk on the wire as soon as it is written
// (size line, data, terminating CRLF), and the stream starts with the first
// event. Checked with a raw TLS socket, and with Python's urllib3 — the
// strict chunk reader of the Kubernetes Python client — which must deliver
// every event before the next one is written.
import { spawn, type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer, NO_NAMESPACE_DEFAULTS } from '../helpers/server.js';

/** far beyond a loopback delivery; only an event held back until the next write reaches it */
const DELIVERY_BOUND_MS = 10_000;

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: name } });

class ChunkReader {
  private buf = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  head: string | undefined;

  constructor(readonly socket: TLSSocket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  /** bytes received and not yet consumed */
  get pending(): Buffer {
    return this.buf;
  }

  private async until<T>(take: () => T | undefined): Promise<T | undefined> {
    const end = Date.now() + DELIVERY_BOUND_MS;
    for (;;) {
      const v = take();
      if (v !== undefined) return v;
      const left = end - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  readHead(): Promise<string | undefined> {
    return this.until(() => {
      const at = this.buf.indexOf('\r\n\r\n');
      if (at < 0) return undefined;
      const head = this.buf.subarray(0, at + 4).toString('latin1');
      this.buf = this.buf.subarray(at + 4);
      return head;
    });
  }

  /** one complete chunk (size line, data, CRLF), or undefined if none completes within the bound */
  readChunk(): Promise<string | undefined> {
    return this.until(() => {
      const nl = this.buf.indexOf('\r\n');
      if (nl < 0) return undefined;
      const size = parseInt(this.buf.subarray(0, nl).toString('latin1'), 16);
      if (!Number.isFinite(size)) throw new Error(`not a chunk size line: ${JSON.stringify(this.buf.subarray(0, nl + 2).toString('latin1'))}`);
      const end = nl + 2 + size + 2;
      if (this.buf.length < end) return undefined;
      expect(this.buf.subarray(end - 2, end).toString('latin1')).toBe('\r\n');
      const data = this.buf.subarray(nl + 2, nl + 2 + size).toString('utf8');
      this.buf = this.buf.subarray(end);
      return data;
    });
  }
}

describe('watch stream framing', () => {
  let t: TestServer;
  let dir: string;

  beforeAll(async () => {
    t = await startTestServer({ authn: NO_NAMESPACE_DEFAULTS });
    dir = await mkdtemp(join(tmpdir(), 'orch-framing-'));
  });
  afterAll(async () => {
    await t.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends the head and nothing else, then each event as one complete chunk before the next write', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'framing-raw' } } });
    const socket = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem, servername: 'localhost' });
    const reader = new ChunkReader(socket);
    try {
      await new Promise<void>((r) => socket.once('secureConnect', () => r()));
      socket.write('GET /api/v1/namespaces/framing-raw/configmaps?watch=true HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n');
      const head = await reader.readHead();
      expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      expect(head).toMatch(/\r\nTransfer-Encoding: chunked\r\n/i);
      expect(head).not.toMatch(/X-Orch-Flush/i);
      // nothing but the head until the first event
      await t.request('GET', '/api/v1/namespaces/framing-raw/configmaps');
      expect(reader.pending.length).toBe(0);
      for (const name of ['one', 'two', 'three']) {
        expect((await t.request('POST', '/api/v1/namespaces/framing-raw/configmaps', { body: cm(name) })).status).toBe(201);
        const chunk = await reader.readChunk();
        expect(chunk, `event for ${name} complete before the next write`).toBeDefined();
        expect(chunk!.endsWith('\n')).toBe(true);
        expect(JSON.parse(chunk!)).toMatchObject({ type: 'ADDED', object: { metadata: { name } } });
      }
    } finally {
      socket.destroy();
    }
  });

  it('answers HEAD without a body, so the next response on the connection is read right', async () => {
    const socket = tlsConnect({ host: '127.0.0.1', port: t.server.port, ca: t.server.caPem, cert: t.server.adminCertPem, key: t.server.adminKeyPem, servername: 'localhost' });
    const reader = new ChunkReader(socket);
    try {
      await new Promise<void>((r) => socket.once('secureConnect', () => r()));
      socket.write('HEAD /api/v1/namespaces/default HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await reader.readHead()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
      socket.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n');
      const next = await reader.readHead();
      expect(next).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    } finally {
      socket.destroy();
    }
  });

  const hasUrllib3 = (() => {
    try {
      execFileSync('python3', ['-c', 'import urllib3'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it.runIf(hasUrllib3)('delivers every event to urllib3 (as the Kubernetes Python client reads watches) before the next write', async () => {
    await t.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'framing-py' } } });
    await writeFile(join(dir, 'ca.crt'), t.server.caPem);
    await writeFile(join(dir, 'admin.crt'), t.server.adminCertPem);
    await writeFile(join(dir, 'admin.key'), t.server.adminKeyPem);
    // the Python client's watch loop: resp.stream(amt=None, decode_content=False), split into lines
    const script = `
import json, sys, urllib3
d = sys.argv[1]
http = urllib3.PoolManager(cert_reqs='CERT_REQUIRED', ca_certs=d + '/ca.crt', cert_file=d + '/admin.crt', key_file=d + '/admin.key', assert_hostname='localhost')
print('imported', flush=True)
r = http.request('GET', sys.argv[2], preload_content=False)
print('status', r.status, flush=True)
pending = b''
for seg in r.stream(amt=None, decode_content=False):
    pending += seg
    while b'\\n' in pending:
        line, pending = pending.split(b'\\n', 1)
        if line.strip():
            ev = json.loads(line)
            print(ev['type'], ev['object']['metadata']['name'], flush=True)
`;
    const py: ChildProcess = spawn('python3', ['-c', script, dir, `https://127.0.0.1:${t.server.port}/api/v1/namespaces/framing-py/configmaps?watch=true`], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let stderr = '';
    let wake: (() => void) | undefined;
    // a line may come in several reads: with PYTHONUNBUFFERED=1 (set on CI hosts) print() writes
    // 'status', ' ', '200' and '\n' separately, and a loaded host lets the reads fall between them
    let partial = '';
    py.stdout!.on('data', (d: Buffer) => {
      const pieces = (partial + d.toString()).split('\n');
      partial = pieces.pop()!;
      lines.push(...pieces.filter((l) => l !== ''));
      wake?.();
    });
    py.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const line = async (want: string, boundMs = DELIVERY_BOUND_MS): Promise<boolean> => {
      const end = Date.now() + boundMs;
      while (!lines.includes(want) && Date.now() < end) {
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 200);
        });
      }
      return lines.includes(want);
    };
    try {
      // starting Python and importing urllib3 is not what is measured: a CI host running
      // the suite's other files beside it took over 10 s once; the events keep their bound
      const started = await line('status 200', 40_000);
      if (!started) {
        // evidence for a rare CI failure (no head within 40 s): did the watch reach the server, does it still answer?
        const metrics = await t.request('GET', '/metrics');
        const watchers = /^orch_watchers (\d+)/m.exec(metrics.text)?.[1];
        const version = (await t.request('GET', '/version')).status;
        expect.fail(`no response head: python printed ${JSON.stringify(lines)}, stderr ${JSON.stringify(stderr)}; server: ${watchers} watchers, /version ${version}`);
      }
      for (const name of ['py-one', 'py-two', 'py-three']) {
        expect((await t.request('POST', '/api/v1/namespaces/framing-py/configmaps', { body: cm(name) })).status).toBe(201);
        expect(await line(`ADDED ${name}`), `urllib3 got ${name} before the next write; stderr: ${stderr}`).toBe(true);
      }
    } finally {
      py.kill();
    }
  }, 120_000);
});
