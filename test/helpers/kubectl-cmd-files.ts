// Manifests and manifest directories for the kubectl command-test ports of
// apply, diff, create, delete, get and wait (test/integration/kubectl-cmd-*.test.ts):
// kube's tests apply whole directories (`-f dir`, `-k dir`, `diff -Rf dir`), so
// files go to subdirectories of the server's data dir.

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { CmdEnv } from './kubectl-cmd.js';

/** writes manifests (path relative to a manifest directory → text) and returns the first one's path */
export async function files(env: CmdEnv, entries: Record<string, string>): Promise<string> {
  const paths: string[] = [];
  for (const [name, text] of Object.entries(entries)) {
    const p = join(env.ts().dataDir, 'manifests', name);
    await mkdir(dirname(p), { recursive: true });
    await writeFile(p, text);
    paths.push(p);
  }
  return paths[0]!;
}

/** `{range .items[*]}{.metadata.name}:{end}` of a list got as JSON */
export function names(listJson: string): string {
  const list = JSON.parse(listJson) as { items: { metadata: { name: string } }[] };
  return list.items.map((i) => `${i.metadata.name}:`).join('');
}

/** a pod manifest in kube's test fixture shape (one pause container) */
export function podYaml(name: string, labels: Record<string, string>, extra: { namespace?: string; image?: string } = {}): string {
  const lines = ['apiVersion: v1', 'kind: Pod', 'metadata:', `  name: ${name}`];
  if (extra.namespace) lines.push(`  namespace: ${extra.namespace}`);
  lines.push('  labels:', ...Object.entries(labels).map(([k, v]) => `    ${k}: "${v}"`));
  lines.push('spec:', '  containers:', '  - name: kubernetes-pause', `    image: ${extra.image ?? 'registry.k8s.io/pause:3.10.1'}`);
  return lines.join('\n') + '\n';
}

/**
 * a Deployment of one pause container selecting `app: <app>`; `strategy` and
 * `container` / `pod` add YAML lines (indented as the spec, the container and
 * the pod spec) for what a test changes
 */
export function deploymentYaml(name: string, app: string, extra: { strategy?: string; container?: string; pod?: string } = {}): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: {app: ${app}}
${extra.strategy ?? ''}  template:
    metadata:
      labels: {app: ${app}}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.10.1
${extra.container ?? ''}${extra.pod ?? ''}`;
}

/** a namespaced CustomResourceDefinition of one served version whose schema keeps every field */
export function crdYaml(group: string, names: { plural: string; singular: string; kind: string }, version: string): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${names.plural}.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: ${names.plural}, singular: ${names.singular}, kind: ${names.kind}, listKind: ${names.kind}List}
  versions:
  - name: ${version}
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
}
