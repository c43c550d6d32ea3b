// Runs the real kubectl (1.32) against a test server's generated kubeconfig.
import { execFile } from 'node:child_process';
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
  try {
    // a discovery cache per server data dir: kubectl caches per host:port, and test servers reuse ports
    const cache = ['--cache-dir', join(dirname(kubeconfig), 'kubectl-cache')];
    const r = await exec('kubectl', ['--kubeconfig', kubeconfig, ...cache, ...extra, ...args], { timeout: 30_000 });
    return { stdout: r.stdout, stderr: r.stderr, code: 0 };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    return { stdout: err.stdout ?? '', stderr: err.stderr ?? '', code: typeof err.code === 'number' ? err.code : -1 };
  }
}
