// What one admission decision is about (Kubernetes' admission.Attributes):
// built from a store write (generic-store.ts AdmissionCall) or a connect
// request (pods/exec and friends), and handed to each plugin of the chain.

import type { UserInfo } from '../../auth/types.js';
import type { ApiObject, ResourceDefinition } from '../types.js';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  /** a fresh uid per request, echoed by webhooks in their response */
  uid: string;
  operation: AdmissionOperation;
  def: ResourceDefinition;
  subresource: string;
  /** the object's kind when it is not the resource's (pods/eviction: policy/v1 Eviction); absent = the definition's */
  kind?: { group: string; version: string; kind: string };
  namespace: string;
  name: string;
  /** the new object (absent for DELETE); CONNECT: the options object (PodExecOptions…) */
  object: ApiObject | undefined;
  oldObject: ApiObject | undefined;
  /** CreateOptions/UpdateOptions/PatchOptions/DeleteOptions of the request */
  options: Record<string, unknown> | undefined;
  dryRun: boolean;
  user: UserInfo;
  /** sink for `Warning` headers */
  warnings: string[];
  /** sink for audit annotations (`Audit` policy actions, fail-open webhooks) */
  auditAnnotations: Record<string, string>;
}

/** the namespace object and parameter objects a plugin may need, read from the local store */
export interface AdmissionLookups {
  /** the Namespace object, or undefined when absent */
  namespace(name: string): ApiObject | undefined;
  /** objects of a kind by apiVersion and kind (ValidatingAdmissionPolicy params); undefined when the kind is not served */
  objectsOf(apiVersion: string, kind: string, namespace: string): { namespaced: boolean; list(): ApiObject[] } | undefined;
}

export interface MutatingPlugin {
  readonly name: string;
  /** may change the object; returns the object to continue with */
  admit(req: AdmissionRequest): Promise<ApiObject | undefined>;
}

export interface ValidatingPlugin {
  readonly name: string;
  validate(req: AdmissionRequest): Promise<void>;
}

/** CREATE admission of a sub-resource body of its own kind (pods/eviction's Eviction) */
export interface SubresourceCreateAdmission {
  def: ResourceDefinition;
  subresource: string;
  kind: { group: string; version: string; kind: string };
  namespace: string;
  name: string;
  object: ApiObject;
  dryRun: boolean;
  user: UserInfo;
  /** admission warnings are pushed here */
  warnings: string[];
}
