// The probe handlers against real sockets (kubelet's pkg/probe texts, docs/nodeagent.md "Probes"):
// httpGet status ranges, headers, User-Agent and redirects; tcpSocket; grpc health; exec through ExecSync.
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeCallError } from '../../src/nodeagent/runtime/client.js';
import { protoService } from '../../src/nodeagent/runtime/proto.js';
import { type ExecRuntime, runProbe } from '../../src/nodeagent/probes/run.js';
import type { ProbedContainer, ProbeSpec } from '../../src/nodeagent/probes/types.js';
import { freePort } from '../helpers/ports.js';

// the server listens on 0.0.0.0, so it answers at 127.0.0.1 and at the "pod's" 127.77.0.1 (another host name)
const POD = '127.77.0.1';
let http: Server;
let port: number;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

beforeAll(async () => {
  http = createHttpServer((req, res): void => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    const url = req.url ?? '/';
    if (url === '/ok') res.end('fine');
    else if (url === '/fail') res.writeHead(500).end('secret body');
    else if (url === '/here') res.writeHead(302, { Location: '/ok' }).end();
    else if (url === '/elsewhere') res.writeHead(301, { Location: `http://127.0.0.1:${port}/ok` }).end('moved');
    else if (url.startsWith('/loop')) res.writeHead(302, { Location: `/loop${url.length}` }).end();
    else if (url !== '/slow') res.writeHead(404).end(); // /slow never answers
  });
  await new Promise<void>((r) => http.listen(0, '0.0.0.0', r));
  port = (http.address() as AddressInfo).port;
});
afterAll(() => {
  http.closeAllConnections();
  http.close();
});

const container: ProbedContainer = { name: 'app', ports: [{ name: 'http', containerPort: 0 }], env: [{ name: 'FILE', value: '/tmp/x' }] };
const noExec: ExecRuntime = { execSync: () => Promise.reject(new Error('no exec here')) };
const probe = (p: ProbeSpec, timeoutMs = 1000, runtime: ExecRuntime = noExec) => runProbe(p, { container: { ...container, ports: [{ name: 'http', containerPort: port }] }, containerId: 'c1', address: POD }, runtime, timeoutMs);

describe('httpGet', () => {
  it('200–399 succeed, others fail with the status code only; the pod address, kube-probe/1.32 and the probe’s headers are sent', async () => {
    expect(await probe({ httpGet: { path: '/ok', port: 'http', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] } })).toEqual({ result: 'success', output: 'fine' });
    const last = seen.at(-1)!;
    expect(last.headers['user-agent']).toBe('kube-probe/1.32');
    expect(last.headers['x-probe']).toBe('yes');
    expect(last.headers.accept).toBe('*/*');
    expect(last.headers.host).toBe(`${POD}:${port}`);
    expect(await probe({ httpGet: { path: '/fail', port } })).toEqual({ result: 'failure', output: 'HTTP probe failed with statuscode: 500' });
    await probe({ httpGet: { path: '/ok', port, httpHeaders: [{ name: 'Host', value: 'example.test' }, { name: 'User-Agent', value: 'mine' }] } });
    expect(seen.at(-1)!.headers).toMatchObject({ host: 'example.test', 'user-agent': 'mine' });
  });

  it('follows redirects on the same host, warns on one to another host, stops after 10 requests', async () => {
    expect(await probe({ httpGet: { path: '/here', port } })).toEqual({ result: 'success', output: 'fine' });
    expect(await probe({ httpGet: { path: '/elsewhere', port } })).toEqual({ result: 'warning', output: 'Probe terminated redirects, Response body: moved' });
    const loop = await probe({ httpGet: { path: '/loop', port } });
    expect(loop.result).toBe('failure');
    expect(loop.output).toMatch(new RegExp(`^Get "http://${POD}:${port}/loop\\d+": stopped after 10 redirects$`));
  });

  it('fails with Go’s texts when refused or too slow; an unknown named port is an error', async () => {
    const closed = await freePort();
    expect(await probe({ httpGet: { path: '/x', port: closed } })).toEqual({ result: 'failure', output: `Get "http://${POD}:${closed}/x": dial tcp ${POD}:${closed}: connect: connection refused` });
    expect(await probe({ httpGet: { path: '/slow', port } }, 200)).toEqual({ result: 'failure', output: `Get "http://${POD}:${port}/slow": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` });
    expect(await probe({ httpGet: { path: '/', port: 'metrics' } })).toEqual({ result: 'error', output: 'port metrics not found' });
  });
});

describe('tcpSocket', () => {
  it('a connection is success; refused is Go’s dial error; host overrides the pod address', async () => {
    expect(await probe({ tcpSocket: { port } })).toEqual({ result: 'success', output: '' });
    const closed = await freePort();
    expect(await probe({ tcpSocket: { port: closed } })).toEqual({ result: 'failure', output: `dial tcp ${POD}:${closed}: connect: connection refused` });
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const only = (s.address() as AddressInfo).port;
    expect((await probe({ tcpSocket: { port: only } })).result).toBe('failure');
    expect(await probe({ tcpSocket: { port: only, host: '127.0.0.1' } })).toEqual({ result: 'success', output: '' });
    s.close();
  });
});

describe('grpc', () => {
  let server: grpc.Server;
  let gport: number;
  const statuses: Record<string, string> = { '': 'SERVING', db: 'NOT_SERVING' };
  beforeAll(async () => {
    server = new grpc.Server();
    server.addService(protoService('grpc-health.proto', 'grpc.health.v1', 'Health'), {
      Check: (call: grpc.ServerUnaryCall<{ service: string }, object>, cb: grpc.sendUnaryData<object>) => {
        const st = statuses[call.request.service];
        if (!st) return cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' } as grpc.ServiceError, null);
        cb(null, { status: st });
      },
    });
    gport = await new Promise<number>((resolve, reject) => server.bindAsync('0.0.0.0:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  });
  afterAll(() => server.forceShutdown());

  it('SERVING is success; other answers and errors fail with kubelet’s texts', async () => {
    expect(await probe({ grpc: { port: gport } })).toEqual({ result: 'success', output: 'service healthy' });
    expect(await probe({ grpc: { port: gport, service: 'db' } })).toEqual({ result: 'failure', output: 'service unhealthy (responded with "NOT_SERVING")' });
    expect(await probe({ grpc: { port: gport, service: 'nope' } })).toEqual({ result: 'failure', output: 'error: health rpc probe failed: rpc error: code = NotFound desc = unknown service' });
    const closed = await freePort();
    expect(await probe({ grpc: { port: closed } }, 300)).toEqual({ result: 'failure', output: `timeout: failed to connect service "${POD}:${closed}" within 300ms: context deadline exceeded` });
  });

  it('a server without the health service: not implemented', async () => {
    const bare = new grpc.Server();
    const p = await new Promise<number>((resolve, reject) => bare.bindAsync('0.0.0.0:0', grpc.ServerCredentials.createInsecure(), (e, n) => (e ? reject(e) : resolve(n))));
    const out = await probe({ grpc: { port: p } });
    expect(out.result).toBe('failure');
    expect(out.output).toMatch(/^error: this server does not implement the grpc health protocol \(grpc\.health\.v1\.Health\): /);
    bare.forceShutdown();
  });
});

describe('exec', () => {
  it('runs through ExecSync with $(VAR) of literal env expanded; exit 0 succeeds; a runtime timeout is `command … timed out`', async () => {
    const calls: { cmd: string[]; timeout: number }[] = [];
    const rt = {
      execSync: (_id: string, cmd: string[], timeout: number) => {
        calls.push({ cmd, timeout });
        if (cmd[0] === 'slow') return Promise.reject(new RuntimeCallError('ExecSync', grpc.status.DEADLINE_EXCEEDED, 'timeout'));
        if (cmd[0] === 'gone') return Promise.reject(new RuntimeCallError('ExecSync', grpc.status.NOT_FOUND, 'container c1 not found'));
        return Promise.resolve({ stdout: Buffer.from('out '), stderr: Buffer.from('err'), exitCode: cmd[0] === 'true' ? 0 : 1 });
      },
    };
    expect(await probe({ exec: { command: ['true', '$(FILE)'] } }, 2000, rt)).toEqual({ result: 'success', output: 'out err' });
    expect(calls[0]).toEqual({ cmd: ['true', '/tmp/x'], timeout: 2 });
    expect(await probe({ exec: { command: ['false'] } }, 1000, rt)).toEqual({ result: 'failure', output: 'out err' });
    expect(await probe({ exec: { command: ['slow', 'x'] } }, 1000, rt)).toEqual({ result: 'failure', output: 'command "slow x" timed out' });
    expect(await probe({ exec: { command: ['gone'] } }, 1000, rt)).toEqual({ result: 'error', output: 'rpc error: code = NotFound desc = container c1 not found' });
  });
});
