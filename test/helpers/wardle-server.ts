// A small real aggregated API server on loopback over TLS, after kube's
// sample-apiserver (wardle.example.com/v1alpha1 Flunders): discovery, its
// OpenAPI v3 document, list, get, create and a watch stream, in memory. It asks for a client certificate
// and records every request with the X-Remote-* headers and the certificate it
// got, so tests can check what orch's proxy sends.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { ensurePki } from '../../src/server/pki.js';

export const WARDLE_GROUP = 'wardle.example.com';
export const WARDLE_VERSION = 'v1alpha1';

export interface WardleRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  /** every header line, lower-case names, repeated ones kept apart */
  headers: [string, string][];
  /** the client certificate's subject CN and issuer CN ('' when none) */
  clientCN: string;
  clientIssuerCN: string;
  /** the certificate, PEM, to verify against the published CA */
  clientCertPem: string;
}

export interface WardleServer {
  port: number;
  /** base64 of the server's CA (the APIService's caBundle) */
  caBundle: string;
  seen: WardleRequest[];
  flunders: Map<string, Record<string, unknown>>;
  close(): Promise<void>;
}

const RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`,
  resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['create', 'delete', 'get', 'list', 'watch'] }],
};

/** the version's OpenAPI v3 document (sample-apiserver publishes one; kube-aggregator merges it) */
export const WARDLE_OPENAPI_V3 = {
  openapi: '3.0.0',
  info: { title: 'wardle', version: 'v0.1' },
  // kubectl explain finds a kind's schema through its GET /{name} answer
  paths: {
    [`/apis/${WARDLE_GROUP}/${WARDLE_VERSION}/namespaces/{namespace}/flunders/{name}`]: {
      get: {
        operationId: 'readWardleV1alpha1NamespacedFlunder',
        responses: { 200: { description: 'OK', content: { 'application/json': { schema: { $ref: '#/components/schemas/com.example.wardle.v1alpha1.Flunder' } } } } },
        'x-kubernetes-action': 'get',
        'x-kubernetes-group-version-kind': { group: WARDLE_GROUP, kind: 'Flunder', version: WARDLE_VERSION },
      },
    },
  },
  components: {
    schemas: {
      'com.example.wardle.v1alpha1.Flunder': {
        description: 'Flunder is a sample object served by the wardle aggregated API server.',
        type: 'object',
        properties: {
          apiVersion: { description: 'APIVersion defines the versioned schema of this representation of an object.', type: 'string' },
          kind: { description: 'Kind is a string value representing the REST resource this object represents.', type: 'string' },
          metadata: { description: 'Standard object metadata.', type: 'object' },
          spec: {
            description: 'FlunderSpec is the specification of a Flunder.',
            type: 'object',
            properties: { reference: { description: 'A name of another flunder, mutually exclusive to the FischerReference.', type: 'string' } },
          },
        },
        'x-kubernetes-group-version-kind': [{ group: WARDLE_GROUP, kind: 'Flunder', version: WARDLE_VERSION }],
      },
    },
  },
};

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

function pemOf(raw: Buffer | undefined): string {
  return raw ? `-----BEGIN CERTIFICATE-----\n${raw.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n` : '';
}

export async function startWardleServer(dir: string, port = 0): Promise<WardleServer> {
  const pki = await ensurePki(join(dir, 'wardle-pki'), { hosts: ['127.0.0.1', 'api.wardle.svc'] });
  const seen: WardleRequest[] = [];
  const flunders = new Map<string, Record<string, unknown>>();
  let rv = 1;
  const record = (req: IncomingMessage): URL => {
    const url = new URL(req.url ?? '/', 'https://wardle');
    const cert = (req.socket as TLSSocket).getPeerCertificate();
    const headers: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!.toLowerCase(), req.rawHeaders[i + 1]!]);
    seen.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers, clientCN: String(cert?.subject?.CN ?? ''), clientIssuerCN: String(cert?.issuer?.CN ?? ''), clientCertPem: pemOf(cert?.raw) });
    return url;
  };
  const handle = (req: IncomingMessage, res: ServerResponse, body: string) => {
    const url = record(req);
    const base = `/apis/${WARDLE_GROUP}/${WARDLE_VERSION}`;
    if (url.pathname === `/apis/${WARDLE_GROUP}`) {
      const gv = { groupVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`, version: WARDLE_VERSION };
      return send(res, 200, { kind: 'APIGroup', apiVersion: 'v1', name: WARDLE_GROUP, versions: [gv], preferredVersion: gv });
    }
    if (url.pathname === base) return send(res, 200, RESOURCES);
    if (url.pathname === `/openapi/v3${base}`) return send(res, 200, WARDLE_OPENAPI_V3);
    const m = new RegExp(`^${base}/namespaces/([^/]+)/flunders(?:/([^/]+))?$`).exec(url.pathname);
    if (!m) return send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
    const [, ns, name] = m;
    const inNs = [...flunders.values()].filter((f) => (f.metadata as { namespace: string }).namespace === ns);
    if (req.method === 'POST') {
      const obj = JSON.parse(body) as Record<string, unknown> & { metadata: Record<string, unknown> };
      obj.metadata = { ...obj.metadata, namespace: ns, resourceVersion: String(++rv), creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
      flunders.set(`${ns}/${String(obj.metadata.name)}`, obj);
      return send(res, 201, obj);
    }
    if (name) {
      const f = flunders.get(`${ns}/${name}`);
      return f ? send(res, 200, f) : send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `flunders.${WARDLE_GROUP} "${name}" not found` });
    }
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      for (const f of inNs) res.write(`${JSON.stringify({ type: 'ADDED', object: f })}\n`);
      return; // left open: the client ends it
    }
    return send(res, 200, { kind: 'FlunderList', apiVersion: `${WARDLE_GROUP}/${WARDLE_VERSION}`, metadata: { resourceVersion: String(rv) }, items: inNs });
  };
  const server: Server = createServer({ key: pki.serving.keyPem, cert: pki.serving.certPem, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => handle(req, res, body));
  });
  // a WebSocket (kube's watch over WebSocket, exec): greets the user the proxy named
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<{ terminate(): void }>();
  server.on('upgrade', (req: IncomingMessage, socket, head) => {
    record(req);
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(ws);
      ws.send(`hello ${String(req.headers['x-remote-user'])}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    caBundle: Buffer.from(pki.ca.certPem).toString('base64'),
    seen,
    flunders,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of sockets) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
