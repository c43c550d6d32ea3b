// One Raft message (~1.1 KiB) back and forth between two processes, over the
// members' transport (PeerTransport: grpc-js client streams, mutual TLS), as
// gRPC-framed messages on one node:http2 stream (the same HTTP/2 and TLS, no
// grpc-js), and as length-prefixed frames on a plain mutual-TLS socket:
// latency per round trip and the CPU of the process that starts each one
// (docs/performance.md "One write at one in flight, traced" and "Session of
// 2026-11-28 afternoon").
//
//   [PP_SIZE=bytes] npx tsx bench/peer-pingpong.ts [roundTrips=3000]

import { fork, spawn } from 'node:child_process';
import http2 from 'node:http2';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { PeerTransport } from '../src/raft/transport.js';
import type { Message } from '../src/raft/types.js';
import { freePort } from '../test/helpers/ports.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const [, self, roleArg, ...rest] = process.argv;
const role = roleArg === 'grpc-echo' || roleArg === 'tls-echo' || roleArg === 'h2-echo' ? roleArg : 'main';
const roundTrips = role === 'main' ? Number(roleArg ?? 3000) : 0;
// PP_SIZE: bytes of the entry (an append of 64 creates is ~84,000)
const payload = new Uint8Array(Number(process.env.PP_SIZE ?? 1100)).fill(7);

interface Pki {
  ca: string;
  cert: string;
  key: string;
  clientCert: string;
  clientKey: string;
}
async function loadPki(dir: string): Promise<Pki> {
  const f = (n: string) => readFile(join(dir, n), 'utf8');
  return { ca: await f('ca.crt'), cert: await f('apiserver.crt'), key: await f('apiserver.key'), clientCert: await f('admin.crt'), clientKey: await f('admin.key') };
}
const transportTls = (p: Pki) => ({ caPem: p.ca, serverCertPem: p.cert, serverKeyPem: p.key, clientCertPem: p.clientCert, clientKeyPem: p.clientKey });

async function measure(one: () => Promise<void>): Promise<{ p50Ms: number; p90Ms: number; cpuUsPerRoundTrip: number }> {
  for (let i = 0; i < 300; i++) await one();
  const lat: number[] = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < roundTrips; i++) {
    const s = performance.now();
    await one();
    lat.push(performance.now() - s);
  }
  const c = process.cpuUsage(c0);
  lat.sort((a, b) => a - b);
  return { p50Ms: +lat[lat.length >> 1]!.toFixed(3), p90Ms: +lat[Math.floor(lat.length * 0.9)]!.toFixed(3), cpuUsPerRoundTrip: Math.round((c.user + c.system) / roundTrips) };
}

if (role === 'grpc-echo') {
  const [pkiDir, a, b] = rest as [string, string, string];
  const t: { current?: PeerTransport } = {};
  t.current = await PeerTransport.start({
    self: 'b',
    listen: `127.0.0.1:${b}`,
    peers: { a: `127.0.0.1:${a}`, b: `127.0.0.1:${b}` },
    tls: transportTls(await loadPki(pkiDir)),
    onMessage: (m) => t.current?.send([{ ...m, from: 'b', to: 'a' }]),
  });
  process.send!('ready');
} else if (role === 'h2-echo') {
  // gRPC's framing (1 flag byte, 4 length bytes) on one HTTP/2 stream, echoed on its response
  const [pkiDir, port] = rest as [string, string];
  const p = await loadPki(pkiDir);
  const server = http2.createSecureServer({ ca: p.ca, cert: p.cert, key: p.key, requestCert: true, rejectUnauthorized: true });
  server.on('stream', (s) => {
    s.respond({ ':status': 200, 'content-type': 'application/grpc' });
    s.on('data', (d: Buffer) => s.write(d));
  });
  server.listen(Number(port), '127.0.0.1', () => process.send!('ready'));
} else if (role === 'tls-echo') {
  const [pkiDir, port] = rest as [string, string];
  const p = await loadPki(pkiDir);
  const server = tls.createServer({ ca: p.ca, cert: p.cert, key: p.key, requestCert: true, rejectUnauthorized: true }, (s) => {
    s.setNoDelay(true);
    s.on('data', (d) => s.write(d));
  });
  server.listen(Number(port), '127.0.0.1', () => process.send!('ready'));
} else {
  const pkiDir = await mkdtemp(join(tmpdir(), 'orch-pingpong-pki-'));
  await new Promise<void>((res, rej) => spawn(process.execPath, ['--import', 'tsx', 'deploy/init-pki.ts', pkiDir], { cwd: REPO, stdio: 'ignore' }).on('exit', (c) => (c === 0 ? res() : rej(new Error('init-pki failed')))));
  const p = await loadPki(pkiDir);
  const echo = (args: string[]) => {
    const child = fork(self!, args, { execArgv: process.execArgv, stdio: 'ignore' });
    return { child, ready: new Promise((r) => child.once('message', r)) };
  };
  // the members' transport
  const [a, b] = [await freePort(), await freePort()];
  const g = echo(['grpc-echo', pkiDir, String(a), String(b)]);
  await g.ready;
  let answered: (() => void) | undefined;
  const transport = await PeerTransport.start({ self: 'a', listen: `127.0.0.1:${a}`, peers: { a: `127.0.0.1:${a}`, b: `127.0.0.1:${b}` }, tls: transportTls(p), onMessage: () => answered?.() });
  // an append of one 1.1 KiB entry (a create's entry is about that), echoed back as it came
  const ping: Message = { type: 'append', from: 'a', to: 'b', term: 1, index: 0, logTerm: 0, commit: 0, entries: [{ term: 1, index: 1, type: 'normal', data: payload }] };
  const grpcStats = await measure(() => new Promise<void>((r) => ((answered = r), transport.send([ping]))));
  await transport.close();
  g.child.kill();
  // the same bytes with gRPC's framing on one node:http2 stream (HTTP/2 and TLS without grpc-js)
  const h2Port = await freePort();
  const h = echo(['h2-echo', pkiDir, String(h2Port)]);
  await h.ready;
  const session = http2.connect(`https://localhost:${h2Port}`, { ca: p.ca, cert: p.clientCert, key: p.clientKey });
  const h2stream = session.request({ ':method': 'POST', ':path': '/orch.raft.v1.RaftTransport/Stream', 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false });
  const grpcFrame = Buffer.alloc(5 + payload.length);
  grpcFrame.writeUInt32BE(payload.length, 1);
  grpcFrame.set(payload, 5);
  let h2Got = 0;
  let h2Back: (() => void) | undefined;
  h2stream.on('data', (d: Buffer) => {
    h2Got += d.length;
    if (h2Got >= grpcFrame.length) {
      h2Got = 0;
      h2Back?.();
    }
  });
  const h2Stats = await measure(() => new Promise<void>((r) => ((h2Back = r), h2stream.write(grpcFrame))));
  h2stream.close();
  session.destroy();
  h.child.kill();
  // plain TLS frames (4-byte length, then the bytes)
  const port = await freePort();
  const t = echo(['tls-echo', pkiDir, String(port)]);
  await t.ready;
  const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: p.ca, cert: p.clientCert, key: p.clientKey });
  await new Promise((r) => socket.once('secureConnect', r));
  socket.setNoDelay(true);
  const frame = Buffer.alloc(4 + payload.length);
  frame.writeUInt32BE(payload.length, 0);
  frame.set(payload, 4);
  let got = 0;
  let back: (() => void) | undefined;
  socket.on('data', (d: Buffer) => {
    got += d.length;
    if (got >= frame.length) {
      got = 0;
      back?.();
    }
  });
  const tlsStats = await measure(() => new Promise<void>((r) => ((back = r), socket.write(frame))));
  socket.destroy();
  t.child.kill();
  await rm(pkiDir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ roundTrips, peerTransportGrpc: grpcStats, http2GrpcFraming: h2Stats, plainTlsFrames: tlsStats })}\n`);
  process.exit(0);
}
