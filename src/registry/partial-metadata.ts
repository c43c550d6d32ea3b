// The PartialObjectMetadata representation (Accept `…;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`
// and `as=PartialObjectMetadataList`): only the type meta and `metadata` of each object, as
// kube-apiserver serves it to client-go's metadata client and metadata-only informers.

import { notAcceptable } from '../core/errors.js';
import type { ApiObject, ResourceDefinition } from './types.js';

export interface PartialTarget {
  /** the meta group and version the client named (`meta.k8s.io`, `v1`) */
  group: string;
  version: string;
  /** `as=PartialObjectMetadataList` */
  list: boolean;
}

export function partialObject(obj: ApiObject, t: PartialTarget): object {
  return { kind: 'PartialObjectMetadata', apiVersion: `${t.group}/${t.version}`, metadata: obj.metadata ?? {} };
}

export function partialList(items: readonly ApiObject[], listMeta: Record<string, unknown>, t: PartialTarget): object {
  return { kind: 'PartialObjectMetadataList', apiVersion: `${t.group}/${t.version}`, metadata: listMeta, items: items.map((o) => partialObject(o, t)) };
}

/** the Go type kube-apiserver names in its 406 (`*v1.ConfigMap`, `*unstructured.Unstructured`) */
function goType(def: ResourceDefinition, list: boolean): string {
  if (def.customResource) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  return `*${def.version}.${def.kind}${list ? 'List' : ''}`;
}

/** kube answers a list asked for as one object, or one object asked for as a list, 406 */
export function checkPartialShape(def: ResourceDefinition, t: PartialTarget, isList: boolean): void {
  if (isList && !t.list) {
    throw notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${goType(def, true)})`);
  }
  if (!isList && t.list) {
    throw notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${goType(def, false)})`);
  }
}
