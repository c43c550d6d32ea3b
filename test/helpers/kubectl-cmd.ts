// The harness of the kubectl command-test ports (kube's test/cmd/*.sh and
// test/cmd/testdata/*.txtar): one server per file with kube's group names, a
// directory of manifests, and kubectl run in a namespace of the caller's.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { type KubectlResult, runKubectl } from './kubectl.js';
import { type TestServer, startTestServer } from './server.js';
import type { ServerOptions } from '../../src/server/server.js';

export interface CmdEnv {
  t: TestServer;
  dir: string;
  /** kubectl with the given arguments (no namespace added) */
  run(...args: string[]): Promise<KubectlResult>;
  /** kubectl that must succeed: its stdout */
  ok(...args: string[]): Promise<string>;
  /** kubectl that must fail: stdout and stderr together, as kube's `2>&1` captures */
  fails(...args: string[]): Promise<string>;
  /** writes manifests (path relative to the manifest directory → text) and returns the first path made absolute */
  files(entries: Record<string, string>): Promise<string>;
  /** a fresh namespace (kube's create_and_use_new_namespace) */
  namespace(base: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startCmdEnv(opts: Partial<ServerOptions> = {}): Promise<CmdEnv> {
  const t = await startTestServer({ apiDomain: 'k8s.io', ...opts });
  const dir = await mkdtemp(join(tmpdir(), 'orch-kubectl-cmd-'));
  let seq = 0;
  const run = (...args: string[]) => runKubectl(t.server.kubeconfigPath, args);
  const env: CmdEnv = {
    t,
    dir,
    run,
    ok: async (...args) => {
      const r = await run(...args);
      expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    },
    fails: async (...args) => {
      const r = await run(...args);
      expect(r.code, `kubectl ${args.join(' ')} should fail: ${r.stdout}`).not.toBe(0);
      return r.stdout + r.stderr;
    },
    files: async (entries) => {
      const paths: string[] = [];
      for (const [name, text] of Object.entries(entries)) {
        const p = join(dir, name);
        await mkdir(dirname(p), { recursive: true });
        await writeFile(p, text);
        paths.push(p);
      }
      return paths[0]!;
    },
    namespace: async (base) => {
      const name = `${base}-${++seq}`;
      await env.ok('create', 'namespace', name);
      return name;
    },
    stop: async () => {
      await t.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return env;
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
