// The streams of docs/nodeagent.md "Streams" driven by @kubernetes/client-node 1.3.0 as its docs use
// them (Exec, Attach, PortForward, Log): the library asks for its own subprotocols and query
// parameters (`ports=`, PodPortForwardOptions), which kubectl does not use.
import { join } from 'node:path';
import { createServer, type Server } from 'node:net';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import type { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sink } from '../helpers/client-node.js';
import { eventually as waitFor } from '../helpers/eventually.js';
import { type AgentProcess, startAgentProcess } from '../helpers/nodeagent.js';
import { type TestServer, startTestServer } from '../helpers/server.js';

let ts: TestServer;
let agent: AgentProcess;
let kc: k8s.KubeConfig;
let listener: Server;
let listenPort: number;
const NS = 'default';

const eventually = <T>(f: () => Promise<T>, what: string, ms = 45_000) => waitFor(f, what, { timeoutMs: ms, intervalMs: 200, context: () => agent?.output() ?? '' });

beforeAll(async () => {
  ts = await startTestServer();
  agent = await startAgentProcess(ts, { nodeName: 'node-cn' });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(join(ts.dataDir, 'admin.kubeconfig'));
  listener = createServer((s) => s.on('data', (d) => s.write(`pong:${d}`)));
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  listenPort = (listener.address() as { port: number }).port;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const script = 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done';
  for (const [name, command] of [
    ['ticker', ['sh', '-c', script]],
    ['catter', ['sh', '-c', 'cat']],
  ] as const) {
    await core.createNamespacedPod({ namespace: NS, body: { metadata: { name }, spec: { nodeName: 'node-cn', containers: [{ name: 'main', image: 'busybox', command: [...command] }] } } });
  }
  for (const name of ['ticker', 'catter']) {
    await eventually(async () => {
      const p = await core.readNamespacedPod({ namespace: NS, name });
      return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c) => c.state?.running);
    }, `pod ${name} running`);
  }
}, 90_000);

afterAll(async () => {
  await new Promise((r) => listener?.close(r));
  await agent?.stop();
  await ts?.stop();
});

describe('client-node streams', () => {
  it('Exec: v5.channel.k8s.io, stdout and stderr apart, stdin, and the exit code in the Status', async () => {
    const run = async (command: string[], input?: string) => {
      const out = sink();
      const err = sink();
      let status: k8s.V1Status | undefined;
      const stdin = input === undefined ? null : new PassThrough();
      const ws = await new k8s.Exec(kc).exec(NS, 'ticker', 'main', command, out, err, stdin, false, (s) => (status = s));
      stdin?.end(input);
      await new Promise((r) => ws.once('close', r));
      return { protocol: ws.protocol, out: out.text(), err: err.text(), status };
    };
    const ok = await run(['sh', '-c', 'echo to-out; echo to-err >&2']);
    expect(ok).toEqual({ protocol: 'v5.channel.k8s.io', out: 'to-out\n', err: 'to-err\n', status: { metadata: {}, status: 'Success' } });
    const echoed = await run(['cat'], 'from stdin\n');
    expect(echoed.out).toBe('from stdin\n');
    const failed = await run(['sh', '-c', 'exit 3']);
    expect(failed.status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '3' }] } });
  });

  it('Attach: joins the container process, its stdin and its output', async () => {
    const out = sink();
    const stdin = new PassThrough();
    const ws = await new k8s.Attach(kc).attach(NS, 'catter', 'main', out, null, stdin, false);
    expect(ws.protocol).toBe('v5.channel.k8s.io');
    stdin.write('ping\n');
    await eventually(async () => out.text() === 'ping\n', 'attached output', 10_000);
    ws.close();
  });

  it('PortForward: the `ports` query parameter of PodPortForwardOptions reaches the pod', async () => {
    const out = sink();
    const err = sink();
    const input = new PassThrough();
    // without a retry count the library answers the WebSocket itself (with one, a function that makes it)
    const ws = (await new k8s.PortForward(kc).portForward(NS, 'ticker', [listenPort], out, err, input)) as WebSocket;
    expect(ws.protocol).toBe('v4.channel.k8s.io');
    input.write('hello');
    await eventually(async () => out.text() === 'pong:hello', `forwarded answer (got "${out.text()}", error channel "${err.text()}")`, 10_000);
    ws.close();
  });

  it('Log: follows the container log until the caller aborts', async () => {
    const out = new PassThrough();
    let text = '';
    out.on('data', (d: Buffer) => (text += d.toString()));
    const req = await new k8s.Log(kc).log(NS, 'ticker', 'main', out, { follow: true, tailLines: 1, timestamps: true });
    await eventually(async () => text.split('\n').length >= 4, 'three followed lines', 10_000);
    req.abort();
    expect(text.split('\n')[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}000Z tick \d+$/);
  });
});
