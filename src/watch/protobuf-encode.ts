// Protobuf watch streams (spec 000 §2.5, §2.7, §4.3), as kube-apiserver writes
// them for `Accept: application/vnd.kubernetes.protobuf[;stream=watch]`:
// Content-Type `<media type>;stream=watch`, and each event one frame
//
//   [4-byte big-endian length] WatchEvent { string type = 1; RawExtension object = 2 }
//   RawExtension { bytes raw = 1 }
//
// The WatchEvent itself is written by client-go's "raw" protobuf serializer
// (apimachinery's StreamSerializer for protobuf: no `k8s\0` prefix, no
// `Unknown` wrapper — the reader knows it is a WatchEvent); only the embedded
// object is a complete enveloped protobuf object (prefix + Unknown{typeMeta,
// raw}), exactly the body a GET answers. ERROR events embed a v1 Status,
// bookmarks an object of the watched kind with only its resourceVersion.
//
// One frame is one `write` on the sink, so the gateway sends it as one
// complete HTTP chunk (docs/watch.md "Wire framing").

import protobuf from 'protobufjs/minimal.js';
import type { Status } from '../core/errors.js';
import type { ProtobufCatalog } from '../registry/protobuf-catalog.js';
import type { ApiObject } from '../registry/types.js';
import { type WatchEncoder, type WatchEventType, bookmarkObject, withTypeMeta } from './encode.js';

const { Writer } = protobuf;

/** `<media type>;stream=watch`, the Content-Type kube answers a protobuf watch with */
export function protobufWatchContentType(mediaType: string): string {
  return `${mediaType};stream=watch`;
}

/** one length-prefixed WatchEvent frame around an enveloped object */
export function watchEventFrame(type: WatchEventType, embedded: Uint8Array): Buffer {
  const w = Writer.create();
  w.uint32((1 << 3) | 2).string(type);
  // object = 2: RawExtension { raw = 1 }
  w.uint32((2 << 3) | 2).fork();
  w.uint32((1 << 3) | 2).bytes(embedded);
  w.ldelim();
  const msg = w.finish();
  const frame = Buffer.allocUnsafe(4 + msg.length);
  frame.writeUInt32BE(msg.length, 0);
  frame.set(msg, 4);
  return frame;
}

export class ProtobufWatchEncoder implements WatchEncoder {
  readonly contentType: string;
  readonly durable = true;
  private readonly key: string;

  constructor(
    private readonly catalog: ProtobufCatalog,
    private readonly apiVersion: string,
    private readonly kind: string,
    mediaType: string,
  ) {
    this.contentType = protobufWatchContentType(mediaType);
    // the bytes do not depend on the media type name, so both names share them
    this.key = `protobuf|${apiVersion}|${kind}`;
  }

  shareKey(): string {
    return this.key;
  }

  objectEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject): Buffer {
    return this.frame(type, withTypeMeta(obj, this.apiVersion, this.kind));
  }

  sentObjectEvent(): void {}

  bookmark(resourceVersion: string, annotations?: Record<string, string>): Buffer {
    return this.frame('BOOKMARK', bookmarkObject(this.apiVersion, this.kind, resourceVersion, annotations));
  }

  error(status: Status): Buffer {
    return this.frame('ERROR', status);
  }

  private frame(type: WatchEventType, body: object): Buffer {
    // the watch was negotiated only for kinds with a protobuf form (router), and
    // Status always has one; fields protobuf cannot carry are left out, as a
    // GET without a fallback media type does
    const enc = this.catalog.encodeBody(body);
    if (!enc) throw new Error(`no protobuf form for ${this.apiVersion} ${this.kind}`);
    return watchEventFrame(type, enc.bytes);
  }
}
