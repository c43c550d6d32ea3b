// Watch event encodings (spec 000 §2.5, §4.3): one JSON document per line
// `{"type":…,"object":…}\n` (application/json), a CBOR sequence
// (application/cbor-seq), and the Table representation kubectl asks for with
// `Accept: application/json;as=Table;…` (§2.3).
//
// An encoder says under which key its bytes may be shared: every watcher with
// the same key gets the very same Buffer, so an event is serialised once per
// (event, format), not once per watcher (docs/watch.md "Encoding once").

import { encode as encodeCbor } from 'cbor-x';
import type { Status } from '../core/errors.js';
import { toTable } from '../registry/table.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** the annotation Kubernetes clients look for on the bookmark that ends the initial events (spec 000 §4.5) */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export interface WatchEncoder {
  readonly contentType: string;
  /**
   * The key under which this watcher's encoding of an object event may be
   * shared with other watchers right now (it may change: a table watcher's
   * first event carries column definitions, later ones do not).
   */
  shareKey(): string;
  /** false when an encoding goes stale with time (table Age cells): share it only within one dispatch pass */
  readonly durable: boolean;
  /** encodes an event whose object is a stored object of the watched kind */
  objectEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject): Buffer;
  /** called after an object event was written to this watcher */
  sentObjectEvent(): void;
  bookmark(resourceVersion: string, annotations?: Record<string, string>): Buffer;
  error(status: Status): Buffer;
}


/** the object with the served kind's type meta first (spec 000 §2.2), without touching the shared original */
export function withTypeMeta(obj: ApiObject, apiVersion: string, kind: string): ApiObject {
  return Object.assign({ apiVersion, kind }, obj, { apiVersion, kind });
}

function jsonLine(type: WatchEventType, objectJson: string): Buffer {
  return Buffer.from(`{"type":"${type}","object":${objectJson}}\n`);
}

export class JsonWatchEncoder implements WatchEncoder {
  readonly contentType = 'application/json';
  readonly durable = true;
  private readonly key: string;

  constructor(
    private readonly apiVersion: string,
    private readonly kind: string,
  ) {
    this.key = `json|${apiVersion}|${kind}`;
  }

  shareKey(): string {
    return this.key;
  }

  objectEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject): Buffer {
    return jsonLine(type, JSON.stringify(withTypeMeta(obj, this.apiVersion, this.kind)));
  }

  sentObjectEvent(): void {}

  bookmark(resourceVersion: string, annotations?: Record<string, string>): Buffer {
    return jsonLine('BOOKMARK', JSON.stringify(bookmarkObject(this.apiVersion, this.kind, resourceVersion, annotations)));
  }

  error(status: Status): Buffer {
    return jsonLine('ERROR', JSON.stringify(status));
  }
}

/**
 * `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (client-go's metadata
 * informers): every event's object, bookmarks included, is a PartialObjectMetadata of the meta
 * group and version the client named, as kube-apiserver transforms them; errors stay Status.
 */
export class PartialWatchEncoder implements WatchEncoder {
  readonly contentType = 'application/json';
  readonly durable = true;
  private readonly key: string;
  private readonly metaApiVersion: string;

  constructor(apiVersion: string, kind: string, meta: { group: string; version: string }) {
    this.metaApiVersion = `${meta.group}/${meta.version}`;
    this.key = `partial|${apiVersion}|${kind}|${this.metaApiVersion}`;
  }

  shareKey(): string {
    return this.key;
  }

  objectEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject): Buffer {
    return jsonLine(type, JSON.stringify({ kind: 'PartialObjectMetadata', apiVersion: this.metaApiVersion, metadata: obj.metadata ?? {} }));
  }

  sentObjectEvent(): void {}

  bookmark(resourceVersion: string, annotations?: Record<string, string>): Buffer {
    return jsonLine('BOOKMARK', JSON.stringify(bookmarkObject(this.metaApiVersion, 'PartialObjectMetadata', resourceVersion, annotations)));
  }

  error(status: Status): Buffer {
    return jsonLine('ERROR', JSON.stringify(status));
  }
}

/** `application/cbor-seq`: each event is one CBOR item (spec 000 §4.3) */
export class CborWatchEncoder implements WatchEncoder {
  readonly contentType = 'application/cbor-seq';
  readonly durable = true;
  private readonly key: string;

  constructor(
    private readonly apiVersion: string,
    private readonly kind: string,
  ) {
    this.key = `cbor|${apiVersion}|${kind}`;
  }

  shareKey(): string {
    return this.key;
  }

  objectEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject): Buffer {
    return Buffer.from(encodeCbor({ type, object: withTypeMeta(obj, this.apiVersion, this.kind) }));
  }

  sentObjectEvent(): void {}

  bookmark(resourceVersion: string, annotations?: Record<string, string>): Buffer {
    return Buffer.from(encodeCbor({ type: 'BOOKMARK', object: bookmarkObject(this.apiVersion, this.kind, resourceVersion, annotations) }));
  }

  error(status: Status): Buffer {
    return Buffer.from(encodeCbor({ type: 'ERROR', object: status }));
  }
}

/**
 * Table watch (`kubectl get -w`): each event's object is a Table with one
 * row. Only the first event carries `columnDefinitions`; kubectl keeps the
 * last definitions it saw when a later table has none (it does this to save
 * bandwidth on watches), so later events send an empty list.
 */
export class TableWatchEncoder implements WatchEncoder {
  readonly contentType = 'application/json';
  readonly durable = false;
  private sentHeaders = false;
  private readonly baseKey: string;

  constructor(
    private readonly def: ResourceDefinition,
    private readonly apiVersion: string,
    private readonly meta: { group: string; version: string },
    private readonly includeObject: 'None' | 'Metadata' | 'Object',
    /** the server's clock (src/core/clock.ts): a row's ages are relative to the event's encoding */
    private readonly now: () => number,
  ) {
    this.baseKey = `table|${apiVersion}|${def.kind}|${meta.group}/${meta.version}|${includeObject}`;
  }

  shareKey(): string {
    return `${this.baseKey}|${this.sentHeaders ? 'rows' : 'headers'}`;
  }

  objectEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: ApiObject): Buffer {
    const typed = withTypeMeta(obj, this.apiVersion, this.def.kind);
    const table = toTable(
      this.def,
      [typed],
      { resourceVersion: obj.metadata?.resourceVersion },
      { group: this.meta.group, version: this.meta.version, includeObject: this.includeObject, now: this.now() },
    ) as { columnDefinitions: unknown[] };
    if (this.sentHeaders) table.columnDefinitions = [];
    return jsonLine(type, JSON.stringify(table));
  }

  sentObjectEvent(): void {
    this.sentHeaders = true;
  }

  bookmark(resourceVersion: string, annotations?: Record<string, string>): Buffer {
    const metadata: Record<string, unknown> = { resourceVersion };
    if (annotations) metadata.annotations = annotations;
    const table = { kind: 'Table', apiVersion: `${this.meta.group}/${this.meta.version}`, metadata, columnDefinitions: [], rows: [] };
    return jsonLine('BOOKMARK', JSON.stringify(table));
  }

  error(status: Status): Buffer {
    return jsonLine('ERROR', JSON.stringify(status));
  }
}

/** spec 000 §2.5: a BOOKMARK's object has only kind, apiVersion and metadata.resourceVersion (plus the §4.5 end-of-initial-events annotation) */
export function bookmarkObject(apiVersion: string, kind: string, resourceVersion: string, annotations?: Record<string, string>): object {
  const metadata: Record<string, unknown> = { resourceVersion };
  if (annotations) metadata.annotations = annotations;
  return { kind, apiVersion, metadata };
}
