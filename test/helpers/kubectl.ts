// Runs the real kubectl (1.32) against a test server's generated kubeconfig.
import { execFile, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface KubectlResult {
  stdout: string;
  stderr: string;
  /** exit code; -1 when kubectl did not exit normally */
  code: number;
}

export async function runKubectl(kubeconfig: string, args: string[], extra: string[] = []): Promise<KubectlResult> {
  return runKubectlInput(kubeconfig, undefined, args, extra);
}

/** kubectl with `input` on its standard input (`kubectl create -f -`; framework.RunKubectlInput) */
export async function runKubectlInput(kubeconfig: string, input: string | undefined, args: string[], extra: string[] = []): Promise<KubectlResult> {
  try {
    // a discovery cache per server data dir: kubectl caches per host:port, and test servers reuse ports
    const cache = ['--cache-dir', join(dirname(kubeconfig), 'kubectl-cache')];
    const run = exec('kubectl', ['--kubeconfig', kubeconfig, ...cache, ...extra, ...args], { timeout: 30_000 });
    if (input !== undefined) run.child.stdin?.end(input);
    const r = await run;
    return { stdout: r.stdout, stderr: r.stderr, code: 0 };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : -1 };
  }
}

/** a long-running kubectl (e.g. `get --watch`): its output so far, and stop() to end it */
export function startKubectl(kubeconfig: string, args: string[]): { out(): string; err(): string; stop(): Promise<void> } {
  const child = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return {
    out: () => out,
    err: () => err,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
