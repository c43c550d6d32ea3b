// The peer transport over mutual TLS with the cluster's shared CA
// (src/raft/transport.ts TransportTls.authorizePeer, wired in
// src/server/open-store.ts): the CA also signs nodes' and users' client
// certificates, so a verified certificate is not enough — a stream is taken
// only from a member's identity, and a node's certificate, valid for the API,
// cannot inject Raft messages into the cluster.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PeerTransport, type TransportTls } from '../../src/raft/transport.js';
import type { Message } from '../../src/raft/types.js';
import { ADMIN_ORGANIZATION, ensurePki, issueClientCertificate, type Pki } from '../../src/server/pki.js';
import { freePort } from '../helpers/ports.js';

let dir: string;
let pki: Pki;
const open: PeerTransport[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-peer-tls-'));
  pki = await ensurePki(join(dir, 'pki'));
});
afterAll(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
  await rm(dir, { recursive: true, force: true });
});

const members = (o: string[] | string | undefined): boolean => ([] as string[]).concat(o ?? []).includes(ADMIN_ORGANIZATION);
const tls = (client: { certPem: string; keyPem: string }): TransportTls => ({
  caPem: pki.ca.certPem,
  serverCertPem: pki.serving.certPem,
  serverKeyPem: pki.serving.keyPem,
  clientCertPem: client.certPem,
  clientKeyPem: client.keyPem,
  authorizePeer: (cert) => members((cert.subject as Record<string, string | string[]>).O),
});
const until = async (done: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
};
const hb = (from: string, commit: number): Message => ({ type: 'heartbeat', from, to: 'b', term: 1, commit });

describe('PeerTransport over mutual TLS', () => {
  it("takes a member's stream and refuses one whose certificate, from the same CA, is a node's", async () => {
    const peers = { a: `127.0.0.1:${await freePort()}`, b: `127.0.0.1:${await freePort()}`, n: `127.0.0.1:${await freePort()}` };
    const got: Message[] = [];
    const logs: string[] = [];
    const b = await PeerTransport.start({ self: 'b', listen: peers.b, peers, onMessage: (m) => got.push(m), tls: tls(pki.admin), log: (l) => logs.push(l), initialBackoffMs: 20, maxBackoffMs: 50 });
    open.push(b);
    const node = await issueClientCertificate(pki, { commonName: 'system:node:n1', organizations: ['system:nodes'] });
    const a = await PeerTransport.start({ self: 'a', listen: peers.a, peers, onMessage: () => undefined, tls: tls(pki.admin), initialBackoffMs: 20, maxBackoffMs: 50 });
    const n = await PeerTransport.start({ self: 'n', listen: peers.n, peers, onMessage: () => undefined, tls: tls(node), initialBackoffMs: 20, maxBackoffMs: 50 });
    open.push(a, n);

    a.send([hb('a', 1)]);
    n.send([hb('n', 99)]);
    await until(() => got.length >= 1 && b.stats().refusedPeers >= 1);
    // the node keeps trying (a send after its back-off opens a new stream): refused each time
    for (let i = 0; i < 100 && b.stats().refusedPeers < 3; i++) {
      n.send([hb('n', 100 + i)]);
      await new Promise((r) => setTimeout(r, 20));
    }
    a.send([hb('a', 2)]);
    await until(() => got.length >= 2);
    // the member's messages arrive; none of the node's, whose streams are refused each time it opens one
    expect(got.map((m) => [m.from, m.type === 'heartbeat' ? m.commit : -1])).toEqual([['a', 1], ['a', 2]]);
    expect(b.stats().refusedPeers).toBeGreaterThanOrEqual(3);
    expect(logs.some((l) => /refused a peer stream .*CN=system:node:n1.*O=system:nodes.* is not a member's/.test(l))).toBe(true);
  });
});
