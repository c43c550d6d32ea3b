// What the ports of kube's kubectl command tests (test/cmd/*.sh, test/cmd/testdata/*.txtar) share:
// one `k8s.io` control plane per file with its controllers and no node agent (kube's test/cmd runs
// kube-apiserver and kube-controller-manager without a kubelet), the real kubectl 1.32, a temp dir
// for manifests, and kube's assertion helpers in our own words.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { eventually } from './eventually.js';
import { type KubectlResult, runKubectl } from './kubectl.js';
import { type TestServer, startTestServer } from './server.js';

export type Obj = Record<string, any>;

export interface CmdEnv {
  ts(): TestServer;
  /** kubectl with these arguments, whatever its exit code */
  run(...args: string[]): Promise<KubectlResult>;
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
  /** polls `check` until it holds (wait_object_assert) */
  until<T>(check: () => Promise<T | undefined | false>, what: string, ms?: number): Promise<T>;
}

export function cmdEnv(prefix: string): CmdEnv {
  let ts: TestServer | undefined;
  let dir = '';
  let seq = 0;
  beforeAll(async () => {
    ts = await startTestServer({ apiDomain: 'k8s.io' });
    dir = await mkdtemp(join(tmpdir(), `orch-kcmd-${prefix}-`));
  }, 60_000);
  afterAll(async () => {
    await ts?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  const run = (...args: string[]): Promise<KubectlResult> => runKubectl(ts!.server.kubeconfigPath, args);
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
  const until = <T>(check: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> =>
    eventually(check, what, { timeoutMs: ms, intervalMs: 150 }) as Promise<T>;
  return { ts: () => ts!, run, ok, fails, json, names, file, namespace, until };
}
