// What the ports of kube's kubectl command tests (test/cmd/*.sh, test/cmd/testdata/*.txtar) share:
// one `k8s.io` control plane per file with its controllers and no node agent (kube's test/cmd runs
// kube-apiserver and kube-controller-manager without a kubelet), the real kubectl 1.32, a temp dir
// for manifests, and kube's assertion helpers in our own words.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect } from 'vitest';
import { eventually } from './eventually.js';
import { type KubectlResult, runKubectl } from './kubectl.js';
import type { ServerOptions } from '../../src/server/server.js';
import { type TestServer, startTestServer } from './server.js';

const exec = promisify(execFile);

export type Obj = Record<string, any>;

export interface CmdEnv {
  ts(): TestServer;
  /** kubectl with these arguments, whatever its exit code */
  run(...args: string[]): Promise<KubectlResult>;
  /** kubectl with more environment variables (EDITOR for `kubectl edit`) */
  runWithEnv(vars: Record<string, string>, ...args: string[]): Promise<KubectlResult>;
  /** kubectl that must succeed: its stdout */
  ok(...args: string[]): Promise<string>;
  /** kubectl that must fail: its stdout and stderr together (kube's `output_message=$(! kubectl … 2>&1)`) */
  fails(...args: string[]): Promise<string>;
  /** `kubectl get <args> -o json` (get_object_assert reads the same object) */
  json(...args: string[]): Promise<Obj>;
  /** the names of a list, as kube's `{{range.items}}{{.metadata.name}}:{{end}}` */
  names(...args: string[]): Promise<string>;
  /** a manifest file (objects are written as JSON) */
  file(name: string, content: string | object): Promise<string>;
  /** a fresh namespace (create_and_use_new_namespace) */
  namespace(base: string): Promise<string>;
  /**
   * describe_resource_chunk_size_assert: `describe <resource> --chunk-size=10` lists the resource, and every
   * related one describe reads (events, pods, …), in pages of 10
   */
  describeChunks(flags: string[], resource: string, related: string[]): Promise<void>;
  /** GET of an API path over HTTPS, for polls that need not start a kubectl each time */
  api(path: string): Promise<Obj>;
  /** polls `check` until it holds (wait_object_assert) */
  until<T>(check: () => Promise<T | undefined | false>, what: string, ms?: number): Promise<T>;
}

/** `opts`: more server options (kube's test-cmd.sh, for one, runs kube-apiserver without ServiceAccount admission) */
export function cmdEnv(prefix: string, opts: Partial<ServerOptions> = {}): CmdEnv {
  let ts: TestServer | undefined;
  let dir = '';
  let seq = 0;
  beforeAll(async () => {
    ts = await startTestServer({ apiDomain: 'k8s.io', ...opts });
    dir = await mkdtemp(join(tmpdir(), `orch-kcmd-${prefix}-`));
  }, 60_000);
  afterAll(async () => {
    await ts?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const run = (...args: string[]): Promise<KubectlResult> => runKubectl(ts!.server.kubeconfigPath, args);
  const runWithEnv = async (vars: Record<string, string>, ...args: string[]): Promise<KubectlResult> => {
    const kubeconfig = ts!.server.kubeconfigPath;
    const argv = ['--kubeconfig', kubeconfig, '--cache-dir', join(dirname(kubeconfig), 'kubectl-cache'), ...args];
    try {
      const r = await exec('kubectl', argv, { timeout: 30_000, env: { ...process.env, ...vars } });
      return { stdout: r.stdout, stderr: r.stderr, code: 0 };
    } catch (e) {
      const err = e as { stdout?: string; stderr?: string; code?: number };
      return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : -1 };
    }
  };
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
  const names = async (...args: string[]): Promise<string> =>
    ((await json(...args)).items as Obj[]).map((i) => `${i.metadata.name}:`).join('');
  const file = async (name: string, content: string | object): Promise<string> => {
    const f = join(dir, `${++seq}-${name}`);
    await writeFile(f, typeof content === 'string' ? content : JSON.stringify(content));
    return f;
  };
  const namespace = async (base: string): Promise<string> => {
    const n = `${base}-${++seq}`;
    await ok('create', 'namespace', n);
    return n;
  };
  const describeChunks = async (flags: string[], resource: string, related: string[]): Promise<void> => {
    const r = await run(...flags, 'describe', resource, '--chunk-size=10', '-v=6');
    expect(r.code, r.stderr).toBe(0);
    for (const listed of [resource, ...related]) expect(r.stderr).toMatch(new RegExp(`GET https://\\S+/${listed}\\?(\\S+&)?limit=10 200`));
  };
  const api = async (path: string): Promise<Obj> => {
    const r = await ts!.request('GET', path);
    expect(r.status, `GET ${path}: ${r.text}`).toBe(200);
    return r.json<Obj>();
  };
  const until = <T>(check: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> =>
    eventually(check, what, { timeoutMs: ms, intervalMs: 150 }) as Promise<T>;
  return { ts: () => ts!, run, runWithEnv, ok, fails, json, names, file, namespace, describeChunks, api, until };
}
