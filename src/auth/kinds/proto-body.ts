// kubectl sends built-in kinds as Kubernetes protobuf (`application/
// vnd.kubernetes.protobuf`: the magic `k8s\0` then a runtime.Unknown
// envelope). Until the gateway decodes protobuf generally, the two bodies this
// module's endpoints receive from kubectl (TokenRequest from `create token`,
// SelfSubjectReview from `auth whoami`) are decoded here by field number.

import protobuf from 'protobufjs/minimal.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const MAGIC = [0x6b, 0x38, 0x73, 0x00];

export function isProtobuf(contentType: string): boolean {
  return contentType.split(';')[0]!.trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

type Fields = Map<number, (Uint8Array | number | bigint)[]>;

function fields(buf: Uint8Array): Fields {
  const r = protobuf.Reader.create(buf);
  const out: Fields = new Map();
  while (r.pos < r.len) {
    const tag = r.uint32();
    const no = tag >>> 3;
    const wire = tag & 7;
    let v: Uint8Array | number | bigint;
    if (wire === 2) v = r.bytes();
    else if (wire === 0) v = BigInt(r.int64().toString());
    else {
      r.skipType(wire);
      continue;
    }
    const list = out.get(no) ?? [];
    list.push(v);
    out.set(no, list);
  }
  return out;
}

const text = (v: unknown): string => (v instanceof Uint8Array ? new TextDecoder().decode(v) : '');

/** the object inside a `k8s\0` envelope: type meta and raw message bytes */
export function unwrapEnvelope(body: Uint8Array): { apiVersion: string; kind: string; raw: Uint8Array } {
  if (body.length < 4 || MAGIC.some((b, i) => body[i] !== b)) throw new Error('not a Kubernetes protobuf envelope');
  const u = fields(body.subarray(4));
  const tm = u.get(1)?.[0];
  const meta = tm instanceof Uint8Array ? fields(tm) : new Map();
  const raw = u.get(2)?.[0];
  return { apiVersion: text(meta.get(1)?.[0]), kind: text(meta.get(2)?.[0]), raw: raw instanceof Uint8Array ? raw : new Uint8Array() };
}

/** authentication/v1 TokenRequest → its JSON shape (spec: audiences=1, boundObjectRef=3, expirationSeconds=4) */
export function decodeTokenRequest(body: Uint8Array): Record<string, unknown> {
  const env = unwrapEnvelope(body);
  const tr = fields(env.raw);
  const specBytes = tr.get(2)?.[0];
  const spec: Record<string, unknown> = {};
  if (specBytes instanceof Uint8Array) {
    const s = fields(specBytes);
    const aud = (s.get(1) ?? []).map(text);
    if (aud.length > 0) spec.audiences = aud;
    const exp = s.get(4)?.[0];
    if (typeof exp === 'bigint') spec.expirationSeconds = Number(exp);
    const b = s.get(3)?.[0];
    if (b instanceof Uint8Array) {
      const bf = fields(b);
      spec.boundObjectRef = { kind: text(bf.get(1)?.[0]), apiVersion: text(bf.get(2)?.[0]), name: text(bf.get(3)?.[0]), uid: text(bf.get(4)?.[0]) };
    }
  }
  return { apiVersion: env.apiVersion, kind: env.kind, spec };
}
