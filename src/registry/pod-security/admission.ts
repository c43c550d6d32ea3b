// kube's PodSecurity admission plugin (on by default in 1.32) for pods: the
// namespace's `pod-security.kubernetes.io/enforce` level (`pod-security.<domain>/` with another --api-domain) refuses a pod that
// violates it (403), its `warn` level adds a Warning. A pod is checked when it
// is created and when its ephemeral containers change (kubectl debug); other
// updates are not, as kube ignores updates that cannot make a pod less secure
// beyond an image. Only the "latest" version of the standards is known; a
// namespace naming another version gets it too.

import { forbidden } from '../../core/errors.js';
import type { ApiObject } from '../types.js';
import type { WriteHooks, WriteOptions } from '../write-options.js';
import { type Level, violations } from './checks.js';

export const POD_SECURITY = 'PodSecurity';

const LEVELS = new Set<Level>(['privileged', 'baseline', 'restricted']);

export interface PodSecurityOptions {
  apiDomain: string;
  lookup(resource: 'namespaces', namespace: string, name: string): ApiObject | undefined;
}

/** a mode's level and version; an unknown level enforces restricted (kube defaults to the strictest on a bad label) */
function policy(labels: Record<string, string>, prefix: string, mode: 'enforce' | 'warn'): { level: Level; version: string } | undefined {
  const raw = labels[`${prefix}${mode}`];
  if (raw === undefined) return undefined;
  const level: Level = LEVELS.has(raw as Level) ? (raw as Level) : 'restricted';
  return { level, version: labels[`${prefix}${mode}-version`] ?? 'latest' };
}

function ephemeralChanged(obj: ApiObject, old: ApiObject, opts: WriteOptions): boolean {
  const spec = (o: ApiObject) => JSON.stringify((o.spec as { ephemeralContainers?: unknown } | undefined)?.ephemeralContainers ?? []);
  return opts.subresource === 'ephemeralcontainers' || spec(obj) !== spec(old);
}

/** `PodSecurity "<level>:<version>": <violations>`, what follows kube's "violates" and "would violate" */
function message(level: Level, version: string, pod: ApiObject): string | undefined {
  const found = violations(level, pod as Record<string, unknown>);
  if (found.length === 0) return undefined;
  return `PodSecurity "${level}:${version}": ${found.map((v) => `${v.reason} (${v.detail})`).join(', ')}`;
}

export function podSecurityHooks(o: PodSecurityOptions): WriteHooks {
  // `pod-security.kubernetes.io/` with --api-domain k8s.io, else `pod-security.<domain>/`
  const prefix = `pod-security.${o.apiDomain === 'k8s.io' ? 'kubernetes.io' : o.apiDomain}/`;
  // a synchronous step of the write (the namespace is read from the store's cache), so writes of other kinds
  // do not gain an asynchronous admission step
  return {
    beforeWrite(def, obj, old, opts) {
      if (def.group !== '' || def.resource !== 'pods') return;
      if (old !== undefined && !ephemeralChanged(obj, old, opts)) return;
      const namespace = obj.metadata?.namespace ?? '';
      const name = obj.metadata?.name ?? '';
      const labels = (o.lookup('namespaces', '', namespace)?.metadata?.labels ?? {}) as Record<string, string>;
      const enforce = policy(labels, prefix, 'enforce');
      const refused = enforce && message(enforce.level, enforce.version, obj);
      if (refused) throw forbidden(`pods ${JSON.stringify(name)} is forbidden: violates ${refused}`, { name, kind: 'pods' });
      const warn = policy(labels, prefix, 'warn');
      const warned = warn && message(warn.level, warn.version, obj);
      if (warned) (opts.warnings ??= []).push(`would violate ${warned}`);
    },
  };
}
