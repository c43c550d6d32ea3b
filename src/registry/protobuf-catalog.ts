// Which schema a protobuf body is read or written with (spec 000 §2.7, §4.3):
// served kinds from the registry, their `<Kind>List` shape (ListMeta = 1,
// items = 2), Status, DeleteOptions and TokenRequest. Kinds without field
// numbers (custom resources) have no protobuf form.

import type { Registry } from './registry.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import type { Definitions, Schema } from '../machinery/schema/types.js';
import type { ResourceDefinition } from './types.js';
import { type JsonObject, decodeProtobufObject, encodeProtobufObjectReport } from '../machinery/protobuf/codec.js';
import { decodeEnvelope, encodeEnvelope, protobufMediaType } from '../machinery/protobuf/envelope.js';
import { ProtobufError } from '../machinery/protobuf/errors.js';
import {
  bindingSchema,
  evictionSchema,
  partialObjectMetadataListSchema,
  partialObjectMetadataSchema,
  scaleSchema,
  tokenRequestSchema,
} from '../machinery/protobuf/messages.js';
import { hasProtoFields } from '../machinery/protobuf/plan.js';

export interface EncodedBody {
  bytes: Uint8Array;
  /** JSON paths that protobuf could not carry; non-empty = the encoding is lossy */
  skipped: string[];
}

export class ProtobufCatalog {
  private readonly names: SchemaNames;
  private readonly lists = new WeakMap<ResourceDefinition, Schema>();
  /** request bodies that are not served kinds (TokenRequest, Eviction, Binding), built on first use */
  private readonly messages = new Map<string, Schema>();
  /**
   * hasProtoFields per schema, asked on every resource request (content
   * negotiation): a scan of the kind's top-level properties each time before.
   * Keyed by the schema object and the definitions it was resolved in
   * (schemas are not modified once registered; a CRD change makes new ones).
   */
  private readonly protoFields = new WeakMap<Schema, { defs: Definitions; has: boolean }>();

  constructor(private readonly registry: Registry) {
    this.names = new SchemaNames(registry.apiDomain);
  }

  /** the protobuf media type this server names (415 lists it among the accepted ones) */
  get mediaType(): string {
    return protobufMediaType(this.registry.apiDomain);
  }

  get defs(): Definitions {
    return this.registry.defs;
  }

  /** whether a kind's objects (and lists, and its Status errors) can be served in protobuf */
  supports(def: ResourceDefinition): boolean {
    return !def.customResource && this.hasProtoFields(def.schema);
  }

  supportsResource(group: string, version: string, resource: string): boolean {
    const def = this.registry.lookup(group, version, resource);
    return def !== undefined && this.supports(def);
  }

  /** the schema of the message named by a type meta, if it has a protobuf form */
  schemaFor(apiVersion: string, kind: string): Schema | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    let s: Schema | undefined;
    if (kind === 'Status' || kind === 'DeleteOptions') s = this.defs[this.names.meta(kind)];
    else if (Object.hasOwn(MESSAGES, kind)) s = this.message(kind, group);
    else {
      const def = this.registry.lookupKind(group, version, kind);
      if (def) s = def.customResource ? undefined : def.schema;
      else if (kind.endsWith('List')) {
        const item = this.registry.lookupKind(group, version, kind.slice(0, -4));
        if (item && !item.customResource) s = this.listSchema(item);
      }
    }
    return s && this.hasProtoFields(s) ? s : undefined;
  }

  /** a body message; Eviction only in the policy group, Binding only in core */
  private message(kind: string, group: string): Schema | undefined {
    const m = MESSAGES[kind]!;
    if (m.group !== undefined && m.group !== group) return undefined;
    let s = this.messages.get(kind);
    if (!s) this.messages.set(kind, (s = m.schema(this.names)));
    return s;
  }

  private hasProtoFields(schema: Schema): boolean {
    const defs = this.defs;
    const m = this.protoFields.get(schema);
    if (m?.defs === defs) return m.has;
    const has = hasProtoFields(schema, defs);
    this.protoFields.set(schema, { defs, has });
    return has;
  }

  /** `<Kind>List` { ListMeta metadata = 1; repeated <Kind> items = 2 } */
  listSchema(def: ResourceDefinition): Schema {
    let s = this.lists.get(def);
    if (!s) {
      s = {
        type: 'object',
        properties: {
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { $ref: this.names.meta('ListMeta'), 'x-orch-proto-field': 1 },
          items: { type: 'array', items: def.schema, 'x-orch-proto-field': 2 },
        },
      };
      this.lists.set(def, s);
    }
    return s;
  }

  /**
   * Decodes an enveloped request body sent to an endpoint of `endpoint`'s kind.
   * The envelope may name another message (TokenRequest on serviceaccounts/token,
   * DeleteOptions on DELETE); `expectedKind` restricts it.
   */
  decodeBody(data: Uint8Array, endpoint: ResourceDefinition, expectedKind?: string): JsonObject {
    const env = decodeEnvelope(data);
    const kind = env.typeMeta.kind || expectedKind || endpoint.kind;
    if (expectedKind !== undefined && kind !== expectedKind) {
      throw new ProtobufError('KindMismatch', `the kind in the data (${kind}) does not match the expected kind (${expectedKind})`);
    }
    let schema: Schema | undefined;
    if (kind === endpoint.kind && expectedKind === undefined) {
      if (!this.supports(endpoint)) throw unsupported(endpoint.kind);
      schema = endpoint.schema;
    } else {
      schema = this.schemaFor(env.typeMeta.apiVersion, kind);
      if (!schema) {
        const known = kind === 'Status' || kind === 'DeleteOptions' || Object.hasOwn(MESSAGES, kind) || this.registry.lookupKind(...splitApiVersion(env.typeMeta.apiVersion), kind);
        if (known) throw unsupported(kind);
        throw new ProtobufError('KindMismatch', `the kind in the data (${kind}) does not match the expected kind (${expectedKind ?? endpoint.kind})`);
      }
    }
    const obj = decodeProtobufObject(env.raw, schema, this.defs);
    const out: JsonObject = {};
    if (env.typeMeta.apiVersion !== '') out.apiVersion = env.typeMeta.apiVersion;
    if (env.typeMeta.kind !== '') out.kind = env.typeMeta.kind;
    return Object.assign(out, obj);
  }

  /** Encodes a response body in the envelope; undefined when its kind has no protobuf form. */
  encodeBody(body: unknown): EncodedBody | undefined {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    const o = body as JsonObject;
    const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
    const kind = typeof o.kind === 'string' ? o.kind : '';
    if (kind === '') return undefined;
    const schema = this.schemaFor(apiVersion, kind);
    if (!schema) return undefined;
    const { bytes, skipped } = encodeProtobufObjectReport(kind === 'PartialObjectMetadataList' ? withoutItemTypeMeta(o) : o, schema, this.defs);
    return { bytes: encodeEnvelope({ apiVersion, kind }, bytes), skipped };
  }
}

/** request-body messages by kind; `group`: the only API group the kind is read in (undefined = any) */
const MESSAGES: Record<string, { group?: string; schema: (n: SchemaNames) => Schema }> = {
  TokenRequest: { schema: tokenRequestSchema },
  Eviction: { group: 'policy', schema: evictionSchema },
  Binding: { group: '', schema: bindingSchema },
  Scale: { group: 'autoscaling', schema: scaleSchema },
  // meta.k8s.io or meta.<apiDomain>: the negotiation checked the group
  PartialObjectMetadata: { schema: partialObjectMetadataSchema },
  PartialObjectMetadataList: { schema: partialObjectMetadataListSchema },
};

/** the items' kind and apiVersion (kube's JSON has them) have no field in PartialObjectMetadata's message */
function withoutItemTypeMeta(list: JsonObject): JsonObject {
  const items = Array.isArray(list.items) ? list.items : [];
  return { ...list, items: items.map((i) => (i !== null && typeof i === 'object' && !Array.isArray(i) ? { metadata: (i as JsonObject).metadata } : i)) };
}

function splitApiVersion(apiVersion: string): [string, string] {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? ['', apiVersion] : [apiVersion.slice(0, slash), apiVersion.slice(slash + 1)];
}

function unsupported(kind: string): ProtobufError {
  return new ProtobufError('Unsupported', `protobuf is not supported for ${kind}: use application/json`);
}
