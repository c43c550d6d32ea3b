// The `--authorization-config` file (spec 001 §5.12, §8):
// AuthorizationConfiguration `apiserver.config.<domain>/v1`, YAML or JSON.
// Every field is validated here with an error naming it, so a bad file is a
// startup error (or a rejected reload) and never a half-built chain.
// matchConditions are compiled once with the CEL library authentication uses.

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { type CompiledExpression, compileCel } from '../authn/cel.js';
import type { FailurePolicy } from './webhook.js';

export const MAX_MATCH_CONDITIONS = 64;
export const MAX_WEBHOOK_TIMEOUT_MS = 30_000;
export const DEFAULT_AUTHORIZED_TTL_MS = 5 * 60_000;
export const DEFAULT_UNAUTHORIZED_TTL_MS = 30_000;

export interface WebhookConfig {
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  failurePolicy: FailurePolicy;
  kubeConfigFile: string;
  matchConditions: CompiledExpression[];
}

export type AuthorizerConfig = { type: 'Node' | 'RBAC'; name: string } | { type: 'Webhook'; name: string; webhook: WebhookConfig };

export interface AuthorizationConfiguration {
  authorizers: AuthorizerConfig[];
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`5m0s`, `1.5s`, `300ms`) in milliseconds; undefined when malformed. */
export function parseGoDuration(v: string): number | undefined {
  if (v === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let at = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(v)) !== null) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = re.lastIndex;
  }
  return at === v.length && at > 0 ? total : undefined;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

function unknownFields(o: Obj, known: string[], path: string): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) throw new Error(`${path}.${k}: unknown field`);
}

function duration(o: Obj, field: string, path: string, dflt?: number): number {
  const v = o[field];
  if (v === undefined || v === '') {
    if (dflt === undefined) throw new Error(`${path}.${field}: Required value`);
    return dflt;
  }
  const ms = typeof v === 'string' ? parseGoDuration(v) : undefined;
  if (ms === undefined) throw new Error(`${path}.${field}: Invalid value: ${JSON.stringify(v)}: must be a duration such as 3s or 5m0s`);
  return ms;
}

function oneOf<T extends string>(o: Obj, field: string, path: string, allowed: readonly T[]): T {
  const v = o[field];
  if (v === undefined || v === '') throw new Error(`${path}.${field}: Required value`);
  if (!(allowed as readonly unknown[]).includes(v)) {
    throw new Error(`${path}.${field}: Unsupported value: ${JSON.stringify(v)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return v as T;
}

function webhookConfig(w: unknown, path: string): WebhookConfig {
  if (!isObj(w)) throw new Error(`${path}: Required value: type Webhook needs a webhook section`);
  unknownFields(w, ['timeout', 'authorizedTTL', 'unauthorizedTTL', 'subjectAccessReviewVersion', 'matchConditionSubjectAccessReviewVersion', 'failurePolicy', 'connectionInfo', 'matchConditions'], path);
  const timeoutMs = duration(w, 'timeout', path);
  if (timeoutMs <= 0) throw new Error(`${path}.timeout: Invalid value: ${JSON.stringify(w.timeout)}: must be greater than 0`);
  if (timeoutMs > MAX_WEBHOOK_TIMEOUT_MS) throw new Error(`${path}.timeout: Invalid value: ${JSON.stringify(w.timeout)}: must be at most 30s`);
  const authorizedTtlMs = duration(w, 'authorizedTTL', path, DEFAULT_AUTHORIZED_TTL_MS);
  const unauthorizedTtlMs = duration(w, 'unauthorizedTTL', path, DEFAULT_UNAUTHORIZED_TTL_MS);
  if (authorizedTtlMs < 0) throw new Error(`${path}.authorizedTTL: must not be negative`);
  if (unauthorizedTtlMs < 0) throw new Error(`${path}.unauthorizedTTL: must not be negative`);
  const subjectAccessReviewVersion = oneOf(w, 'subjectAccessReviewVersion', path, ['v1', 'v1beta1'] as const);
  oneOf(w, 'matchConditionSubjectAccessReviewVersion', path, ['v1'] as const);
  const failurePolicy = oneOf(w, 'failurePolicy', path, ['NoOpinion', 'Deny'] as const);
  const ci = w.connectionInfo;
  if (!isObj(ci)) throw new Error(`${path}.connectionInfo: Required value`);
  unknownFields(ci, ['type', 'kubeConfigFile'], `${path}.connectionInfo`);
  const ciType = oneOf(ci, 'type', `${path}.connectionInfo`, ['KubeConfigFile', 'InClusterConfig'] as const);
  if (ciType === 'InClusterConfig') {
    throw new Error(`${path}.connectionInfo.type: Invalid value: "InClusterConfig": the server cannot call its own hosted SubjectAccessReview API; use KubeConfigFile`);
  }
  if (typeof ci.kubeConfigFile !== 'string' || ci.kubeConfigFile === '') throw new Error(`${path}.connectionInfo.kubeConfigFile: Required value`);
  const mc = w.matchConditions ?? [];
  if (!Array.isArray(mc)) throw new Error(`${path}.matchConditions: must be a list`);
  if (mc.length > MAX_MATCH_CONDITIONS) throw new Error(`${path}.matchConditions: Too many: ${mc.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
  const seen = new Set<string>();
  const matchConditions = mc.map((c, i) => {
    const p = `${path}.matchConditions[${i}]`;
    if (!isObj(c)) throw new Error(`${p}: must be an object with an expression`);
    unknownFields(c, ['expression'], p);
    if (typeof c.expression !== 'string' || c.expression.trim() === '') throw new Error(`${p}.expression: Required value`);
    if (seen.has(c.expression)) throw new Error(`${p}.expression: Duplicate value: ${JSON.stringify(c.expression)}`);
    seen.add(c.expression);
    return compileCel(c.expression, ['request'], `${p}.expression`);
  });
  return { timeoutMs, authorizedTtlMs, unauthorizedTtlMs, subjectAccessReviewVersion, failurePolicy, kubeConfigFile: ci.kubeConfigFile, matchConditions };
}

/** Validates a decoded AuthorizationConfiguration. Errors name the field, e.g. `authorizers[1].webhook.timeout`. */
export function parseAuthorizationConfiguration(doc: unknown, apiDomain: string): AuthorizationConfiguration {
  if (!isObj(doc)) throw new Error('not an AuthorizationConfiguration object');
  const apiVersion = `apiserver.config.${apiDomain}/v1`;
  if (doc.apiVersion !== apiVersion) throw new Error(`apiVersion: Invalid value: ${JSON.stringify(doc.apiVersion)}: must be "${apiVersion}"`);
  if (doc.kind !== 'AuthorizationConfiguration') throw new Error(`kind: Invalid value: ${JSON.stringify(doc.kind)}: must be "AuthorizationConfiguration"`);
  unknownFields(doc, ['apiVersion', 'kind', 'authorizers'], '');
  const list = doc.authorizers;
  if (!Array.isArray(list) || list.length === 0) throw new Error('authorizers: Required value: at least one authorizer');
  const names = new Set<string>();
  const types = new Set<string>();
  const authorizers = list.map((a, i): AuthorizerConfig => {
    const path = `authorizers[${i}]`;
    if (!isObj(a)) throw new Error(`${path}: must be an object`);
    unknownFields(a, ['type', 'name', 'webhook'], path);
    const type = oneOf(a, 'type', path, ['Webhook', 'Node', 'RBAC'] as const);
    const name = a.name;
    if (typeof name !== 'string' || name === '') throw new Error(`${path}.name: Required value`);
    // kube: names are DNS-1123 labels (they label metrics)
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 63) {
      throw new Error(`${path}.name: Invalid value: ${JSON.stringify(name)}: must be a lowercase DNS label (a-z, 0-9, '-')`);
    }
    if (names.has(name)) throw new Error(`${path}.name: Duplicate value: ${JSON.stringify(name)}`);
    names.add(name);
    if (type !== 'Webhook') {
      if (a.webhook !== undefined) throw new Error(`${path}.webhook: Invalid value: non-null webhook config is only allowed for type Webhook`);
      if (types.has(type)) throw new Error(`${path}.type: Duplicate value: ${JSON.stringify(type)}`);
      types.add(type);
      return { type, name };
    }
    return { type, name, webhook: webhookConfig(a.webhook, `${path}.webhook`) };
  });
  return { authorizers };
}

/** Reads (unless `content` is given) and validates the file; errors start with the flag and path. */
export function loadAuthorizationConfiguration(path: string, apiDomain: string, content?: string): AuthorizationConfiguration {
  const where = `--authorization-config: ${path}`;
  let doc: unknown;
  try {
    doc = parseYaml(content ?? readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message.split('\n')[0]}`);
  }
  try {
    return parseAuthorizationConfiguration(doc, apiDomain);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}
