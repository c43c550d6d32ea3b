// What the ports of kubectl's command tests (kubernetes/kubernetes
// test/cmd/*.sh, test/integration/kubectl-cmd-*.test.ts) share: one server
// with kube's group names per file, as hack/make-rules/test-cmd.sh runs
// kube-apiserver and kube-controller-manager without a scheduler or kubelet
// (so pods stay Pending and nodes are bare objects) and with the ServiceAccount
// and DefaultStorageClass admission plugins disabled (its
// DISABLE_ADMISSION_PLUGINS: pods get no token volume, so a pod's manifest can
// be sent again with `kubectl replace`), and the shell helpers
// those tests call (`kubectl … || exit 1`, `kube::test::get_object_assert`,
// `create_and_use_new_namespace`, `kubectl create -f - <<EOF`).

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect } from 'vitest';
import { eventually } from './eventually.js';
import { type KubectlResult, runKubectl } from './kubectl.js';
import { type TestServer, startTestServer } from './server.js';

export type Obj = Record<string, any>;

export interface CmdEnv {
  ts(): TestServer;
  /** kubectl's result, whatever its exit code */
  run(...args: string[]): Promise<KubectlResult>;
  /** stdout, after checking kubectl exited 0 */
  ok(...args: string[]): Promise<string>;
  /** stdout and stderr together, after checking kubectl failed (`! kubectl … || exit 1`) */
  fails(...args: string[]): Promise<string>;
  /** `kubectl get … -o json`, parsed */
  json(...args: string[]): Promise<Obj>;
  /** the names `kubectl get <what>` lists, in its order (`{{range.items}}{{.metadata.name}}:{{end}}`) */
  names(...args: string[]): Promise<string[]>;
  /** an API path read directly (a check of what a kubectl command did, without another kubectl); undefined on 404 */
  api(path: string): Promise<Obj | undefined>;
  /** the names of a list read directly */
  apiNames(path: string): Promise<string[]>;
  /** writes a manifest (an object, or YAML/JSON text) to a file of the file's data dir and returns its path */
  file(name: string, content: Obj | string | Buffer): Promise<string>;
  /** a fresh namespace (create_and_use_new_namespace) */
  newNs(base: string): Promise<string>;
  /** kubectl with an EDITOR (kubectl edit, create --edit) */
  withEditor(editor: string, ...args: string[]): Promise<KubectlResult>;
  /** polls `check` until it holds (kube::test::wait_object_assert); a timeout only bounds a failure */
  until<T>(check: () => Promise<T | undefined | false>, what: string, ms?: number): Promise<T>;
  /**
   * kube::test::describe_resource_chunk_size_assert: `describe <resource> --chunk-size=10` lists the resource,
   * and every related one describe reads (events, pods, …), in pages of 10
   */
  describeChunks(flags: string[], resource: string, related: string[]): Promise<void>;
}

const exec = promisify(execFile);
let seq = 0;

/** registers beforeAll/afterAll: one server for the file, without the scheduler unless `scheduler` */
export function cmdEnv(opts: { scheduler?: boolean } = {}): CmdEnv {
  let t: TestServer | undefined;
  beforeAll(async () => {
    t = await startTestServer({
      apiDomain: 'k8s.io',
      admissionPlugins: { disable: ['ServiceAccount', 'DefaultStorageClass'] },
      ...(opts.scheduler ? {} : { authn: { controllers: ['*', '-scheduler'] } }),
    });
  });
  afterAll(async () => {
    await t?.stop();
  });
  const ts = (): TestServer => t!;
  const run = (...args: string[]): Promise<KubectlResult> => runKubectl(ts().server.kubeconfigPath, args);
  const ok = async (...args: string[]): Promise<string> => {
    const r = await run(...args);
    expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const fails = async (...args: string[]): Promise<string> => {
    const r = await run(...args);
    expect(r.code, `kubectl ${args.join(' ')} should fail: ${r.stdout}`).not.toBe(0);
    return r.stdout + r.stderr;
  };
  const json = async (...args: string[]): Promise<Obj> => JSON.parse(await ok('get', ...args, '-o', 'json')) as Obj;
  const names = async (...args: string[]): Promise<string[]> => {
    const out = await ok('get', ...args, '-o', 'jsonpath={range .items[*]}{.metadata.name}{"\\n"}{end}');
    return out.split('\n').filter((n) => n !== '');
  };
  const api = async (path: string): Promise<Obj | undefined> => {
    const r = await ts().request('GET', path);
    if (r.status === 404) return undefined;
    expect(r.status, `GET ${path}: ${r.text}`).toBe(200);
    return r.json<Obj>();
  };
  const apiNames = async (path: string): Promise<string[]> => ((await api(path))?.items as Obj[]).map((i) => i.metadata.name as string);
  const file = async (name: string, content: Obj | string | Buffer): Promise<string> => {
    const path = join(ts().dataDir, `${++seq}-${name}`);
    await writeFile(path, typeof content === 'string' || Buffer.isBuffer(content) ? content : JSON.stringify(content));
    return path;
  };
  const newNs = async (base: string): Promise<string> => {
    const name = `${base}-${++seq}`;
    await ok('create', 'namespace', name);
    return name;
  };
  const withEditor = async (editor: string, ...args: string[]): Promise<KubectlResult> => {
    const kubeconfig = ts().server.kubeconfigPath;
    const cache = ['--cache-dir', join(dirname(kubeconfig), 'kubectl-cache')];
    try {
      const r = await exec('kubectl', ['--kubeconfig', kubeconfig, ...cache, ...args], { timeout: 30_000, env: { ...process.env, EDITOR: editor, KUBE_EDITOR: editor } });
      return { stdout: r.stdout, stderr: r.stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : -1 };
    }
  };
  const until = <T>(check: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> =>
    eventually(check, what, { timeoutMs: ms, intervalMs: 150 }) as Promise<T>;
  const describeChunks = async (flags: string[], resource: string, related: string[]): Promise<void> => {
    const r = await run(...flags, 'describe', resource, '--chunk-size=10', '-v=6');
    expect(r.code, r.stderr).toBe(0);
    for (const listed of [resource, ...related]) expect(r.stderr).toMatch(new RegExp(`GET https://\\S+/${listed}\\?(\\S+&)?limit=10 200`));
  };
  return { ts, run, ok, fails, json, names, api, apiNames, file, newNs, withEditor, until, describeChunks };
}

/** an editor script for `kubectl edit`: replaces `from` by `to` in the file it is given (kube's tmp-editor.sh) */
export async function sedEditor(env: CmdEnv, from: string, to: string): Promise<string> {
  const path = await env.file('editor.sh', `#!/bin/sh\nsed -i "s|${from}|${to}|g" "$1"\n`);
  await exec('chmod', ['+x', path]);
  return path;
}
