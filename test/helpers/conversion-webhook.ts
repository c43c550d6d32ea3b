// A CRD conversion webhook on loopback over TLS for the conversion tests (the
// admission tests' HTTPS server, its own CA as caBundle), converting as
// agnhost's crd-conversion-webhook does in kube's e2e: v1 `hostPort:
// "host:port"` ↔ v2 `host` + `port`. Every ConversionReview received is
// recorded; `answer` replaces the answer (malformed responses), `down` makes
// every call fail at the connection.

import type { ServerResponse } from 'node:http';
import type { AdmissionWebhook } from './admission-webhook.js';

export type Obj = Record<string, any>;

export interface ConversionReviewSeen {
  apiVersion: string;
  kind: string;
  request: { uid: string; desiredAPIVersion: string; objects: Obj[] };
}

export interface ConversionWebhook {
  path: string;
  reviews: ConversionReviewSeen[];
  /** replaces the converter's answer for the next calls (undefined: convert) */
  answer?: (review: ConversionReviewSeen, converted: Obj[]) => unknown;
  /** every call is cut at the connection */
  down: boolean;
}

/** agnhost's example converter: v1 hostPort ↔ v2 host and port (objects at the top level, as kube's e2e CR) */
export function convertHostPort(o: Obj, to: string): Obj {
  const out: Obj = structuredClone(o);
  const toVersion = to.split('/').pop();
  const from = String(o.apiVersion).split('/').pop();
  if (from === 'v1' && toVersion === 'v2' && typeof out.hostPort === 'string') {
    const [host, port] = out.hostPort.split(':');
    delete out.hostPort;
    out.host = host;
    out.port = port;
  } else if (from === 'v2' && toVersion === 'v1' && (out.host !== undefined || out.port !== undefined)) {
    out.hostPort = `${out.host}:${out.port}`;
    delete out.host;
    delete out.port;
  }
  out.apiVersion = to;
  return out;
}

export function serveConversion(hook: AdmissionWebhook, path = '/crdconvert'): ConversionWebhook {
  const conv: ConversionWebhook = { path, reviews: [], down: false };
  hook.on.set(path, (seen, res: ServerResponse) => {
    if (conv.down) {
      res.socket?.destroy();
      return;
    }
    const review = seen.review as unknown as ConversionReviewSeen;
    conv.reviews.push(review);
    const converted = review.request.objects.map((o) => convertHostPort(o, review.request.desiredAPIVersion));
    const body = conv.answer
      ? conv.answer(review, converted)
      : { apiVersion: review.apiVersion, kind: 'ConversionReview', response: { uid: review.request.uid, result: { status: 'Success' }, convertedObjects: converted } };
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(body));
  });
  return conv;
}

/** the e2e's two versions (kube's apiVersions / alternativeAPIVersions): `storage` names the storage version */
export function hostPortVersions(storage: 'v1' | 'v2'): Obj[] {
  const schema = (props: string[]) => ({ openAPIV3Schema: { type: 'object', properties: Object.fromEntries(props.map((p) => [p, { type: 'string' }])) } });
  return [
    { name: 'v1', served: true, storage: storage === 'v1', schema: schema(['hostPort']) },
    { name: 'v2', served: true, storage: storage === 'v2', schema: schema(['host', 'port']) },
  ];
}
