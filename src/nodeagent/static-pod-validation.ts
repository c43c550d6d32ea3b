// What kubelet's file source rejects of a static pod (spec 002 §4.2
// `staticPodPath`): kubelet runs ValidatePodCreate on the defaulted pod and
// drops the file ("invalid pod"). The agent may not import the control
// plane's validation (nodeagent-is-separate), so this checks the part that
// matters on the node: name and namespace syntax, restartPolicy, container
// names and images, duplicate names. The API validates the mirror pod fully.

import type { KubeObject } from './api-client.js';

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const LABEL_RE = new RegExp(`^${LABEL}$`);
/** a lowercase RFC 1123 subdomain (the agent's own copy: it may not import the control plane's schema code) */
export const SUBDOMAIN_RE = new RegExp(`^${LABEL}(\\.${LABEL})*$`);
const LABEL_MSG = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN_MSG = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

const invalid = (field: string, v: unknown, msg: string) => `${field}: Invalid value: ${JSON.stringify(v)}: ${msg}`;

function dnsLabel(field: string, v: unknown, out: string[]): void {
  if (typeof v !== 'string' || v === '') out.push(`${field}: Required value`);
  else if (v.length > 63) out.push(invalid(field, v, 'must be no more than 63 characters'));
  else if (!LABEL_RE.test(v)) out.push(invalid(field, v, LABEL_MSG));
}

interface ContainerLike {
  name?: unknown;
  image?: unknown;
}

/** kubelet's "invalid pod" field errors of a defaulted static pod (empty: valid) */
export function staticPodErrors(pod: KubeObject): string[] {
  const out: string[] = [];
  const { name, namespace } = pod.metadata;
  if (!name) out.push('metadata.name: Required value');
  else if (name.length > 253) out.push(invalid('metadata.name', name, 'must be no more than 253 characters'));
  else if (!SUBDOMAIN_RE.test(name)) out.push(invalid('metadata.name', name, SUBDOMAIN_MSG));
  dnsLabel('metadata.namespace', namespace, out);
  const spec = (pod.spec ?? {}) as { restartPolicy?: unknown; containers?: ContainerLike[]; initContainers?: ContainerLike[] };
  const policy = spec.restartPolicy ?? 'Always';
  if (!['Always', 'OnFailure', 'Never'].includes(policy as string)) {
    out.push(`spec.restartPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Always", "OnFailure", "Never"`);
  }
  if (!spec.containers?.length) out.push('spec.containers: Required value');
  const seen = new Set<string>();
  for (const [list, cs] of [['initContainers', spec.initContainers ?? []], ['containers', spec.containers ?? []]] as const) {
    cs.forEach((c, i) => {
      const f = `spec.${list}[${i}]`;
      dnsLabel(`${f}.name`, c.name, out);
      if (typeof c.name === 'string' && c.name) {
        if (seen.has(c.name)) out.push(`${f}.name: Duplicate value: ${JSON.stringify(c.name)}`);
        seen.add(c.name);
      }
      if (typeof c.image !== 'string' || c.image.trim() === '') out.push(`${f}.image: Required value`);
    });
  }
  return out;
}
