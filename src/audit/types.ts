// The audit API shapes (`audit.<domain>/v1`, issue 16 item 3): the Event
// written for every stage of a request, and the Policy that decides the level.
// Field names and their order follow kube-apiserver's audit.k8s.io/v1, so the
// tools that read Kubernetes audit logs read these.

import type { UserInfo } from '../auth/types.js';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];

export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

/** `authentication.<domain>/v1` UserInfo as audit events carry it (empty fields left out) */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** a meta/v1 Status, reduced to the bounded fields kube copies into events */
export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  /** RFC 3339 with microseconds (meta/v1 MicroTime) */
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

export interface GroupResources {
  /** '' is the core group */
  group: string;
  // `pods`, `pods/log`, `*`, `*/scale`, `pods/*`; empty = every resource of the group
  resources: string[];
  /** empty = every name */
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  /** '' selects cluster-scoped resources */
  namespaces: string[];
  /** `/healthz`, `/api*` (a trailing `*` is a prefix match), `*` */
  nonResourceURLs: string[];
  omitStages: Stage[];
  /** unset = the policy's */
  omitManagedFields?: boolean;
}

export interface Policy {
  omitStages: Stage[];
  omitManagedFields: boolean;
  rules: PolicyRule[];
}

/** What the policy is matched against: the authenticated user and the request's attributes. */
export interface AuditAttributes {
  user?: UserInfo;
  isResourceRequest: boolean;
  path: string;
  verb: string;
  group: string;
  version: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** The outcome of matching: first matching rule wins (kube's policy checker). */
export interface RequestAuditConfig {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

/** Where events go: must return at once (a bounded buffer behind it). */
export interface AuditSink {
  readonly name: string;
  /** `bodyBytes`: size of the bodies the event carries (request and response), for a byte-bounded buffer */
  push(ev: AuditEvent, bodyBytes?: number): void;
  /** write what is buffered (shutdown); resolves when done or given up */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function levelAtLeast(level: Level, min: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}
