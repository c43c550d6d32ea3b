// The protobuf envelope of spec 000 §2.7: the 4-byte prefix "k8s\0" followed
// by a message `Unknown { TypeMeta typeMeta = 1; bytes raw = 2; string
// contentEncoding = 3; string contentType = 4; }` with `TypeMeta { string
// apiVersion = 1; string kind = 2; }`. `raw` is the serialised object.

import protobuf from 'protobufjs/minimal.js';
import { asProtobufError } from './codec.js';
import { ProtobufError } from './errors.js';

const { Reader, Writer } = protobuf;

export const ENVELOPE_PREFIX = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** the media type of spec 000 §4.3, and the Kubernetes name unmodified clients send */
export const PROTOBUF_MEDIA_TYPES = ['application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'] as const;

/** the protobuf media type orch names (answers, 406 and 415 lists): Kubernetes' with --api-domain k8s.io */
export function protobufMediaType(apiDomain: string): string {
  return apiDomain === 'k8s.io' ? PROTOBUF_MEDIA_TYPES[1] : PROTOBUF_MEDIA_TYPES[0];
}

export function isProtobufMediaType(mediaType: string): boolean {
  return (PROTOBUF_MEDIA_TYPES as readonly string[]).includes(mediaType);
}

export interface TypeMeta {
  apiVersion: string;
  kind: string;
}

export interface Envelope {
  typeMeta: TypeMeta;
  raw: Uint8Array;
  /** empty = no encoding (the only one we accept) */
  contentEncoding: string;
  /** empty = the protobuf media type */
  contentType: string;
}

export function encodeEnvelope(typeMeta: TypeMeta, raw: Uint8Array): Uint8Array {
  const w = Writer.create();
  w.uint32((1 << 3) | 2).fork();
  if (typeMeta.apiVersion !== '') w.uint32((1 << 3) | 2).string(typeMeta.apiVersion);
  if (typeMeta.kind !== '') w.uint32((2 << 3) | 2).string(typeMeta.kind);
  w.ldelim();
  w.uint32((2 << 3) | 2).bytes(raw);
  const body = w.finish();
  const out = new Uint8Array(ENVELOPE_PREFIX.length + body.length);
  out.set(ENVELOPE_PREFIX, 0);
  out.set(body, ENVELOPE_PREFIX.length);
  return out;
}

/** Unwraps an envelope; a body without the prefix is rejected (spec 000 §4.3). */
export function decodeEnvelope(data: Uint8Array): Envelope {
  if (data.length < ENVELOPE_PREFIX.length || ENVELOPE_PREFIX.some((b, i) => data[i] !== b)) {
    throw new ProtobufError('BadPrefix', 'the protobuf body does not start with the expected 4-byte prefix 6b 38 73 00');
  }
  // the prefix and nothing after it: kube's serializer refuses it ("empty body") before reading a kind
  if (data.length === ENVELOPE_PREFIX.length) throw new ProtobufError('Truncated', 'empty body');
  const env: Envelope = { typeMeta: { apiVersion: '', kind: '' }, raw: new Uint8Array(0), contentEncoding: '', contentType: '' };
  try {
    const r = Reader.create(data.subarray(ENVELOPE_PREFIX.length));
    while (r.pos < r.len) {
      const t = r.uint32();
      const n = t >>> 3;
      const wt = t & 7;
      if (n >= 1 && n <= 4 && wt !== 2) throw new ProtobufError('WireType', `envelope field ${n} has wire type ${wt}, expected 2`);
      switch (n) {
        case 1:
          env.typeMeta = readTypeMeta(r.bytes());
          break;
        case 2:
          env.raw = r.bytes();
          break;
        case 3:
          env.contentEncoding = r.string();
          break;
        case 4:
          env.contentType = r.string();
          break;
        default:
          r.skipType(wt);
      }
    }
  } catch (e) {
    throw asProtobufError(e);
  }
  if (env.contentEncoding !== '') {
    throw new ProtobufError('Unsupported', `unsupported protobuf content encoding ${JSON.stringify(env.contentEncoding)}`);
  }
  return env;
}

function readTypeMeta(bytes: Uint8Array): TypeMeta {
  const r = Reader.create(bytes);
  const tm: TypeMeta = { apiVersion: '', kind: '' };
  while (r.pos < r.len) {
    const t = r.uint32();
    const n = t >>> 3;
    const wt = t & 7;
    if ((n === 1 || n === 2) && wt !== 2) throw new ProtobufError('WireType', `TypeMeta field ${n} has wire type ${wt}, expected 2`);
    if (n === 1) tm.apiVersion = r.string();
    else if (n === 2) tm.kind = r.string();
    else r.skipType(wt);
  }
  return tm;
}
