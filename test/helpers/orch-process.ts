// Runs `orch <subcommand> …` as a real process (src/cli/main.ts through tsx), as a user runs the built command:
// its output so far, a wait for a line, its exit code; and a server started as `npm start` starts it in a fresh
// working directory, for the README's flows.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { stringify } from 'yaml';
import { type KubectlResult, runKubectl } from './kubectl.js';
import { freePort } from './ports.js';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
// tsx by its path, so that the process may run in any working directory (a README command runs in the user's)
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface OrchProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved */
  output(): string;
  /** resolves with the first match of `re` in the output; rejects when the process exits first or after `ms` */
  waitFor(re: RegExp, ms?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

export function spawnOrch(args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): OrchProcess {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env }, ...(cwd ? { cwd } : {}) });
  let out = '';
  const waiters: (() => void)[] = [];
  const feed = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  if (process.env.ORCH_AGENT_LOG) child.stderr!.on('data', (d: Buffer) => process.stderr.write(d));
  let done = false;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    done = true;
    resolve(code);
    for (const w of [...waiters]) w();
  }));
  return {
    child,
    output: () => out,
    exited,
    waitFor(re, ms = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = re.exec(out);
          if (m) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(t);
            resolve(m);
          } else if (done) {
            waiters.splice(waiters.indexOf(check), 1);
            clearTimeout(t);
            reject(new Error(`orch ${args[0]} exited before ${re}: ${out}`));
          }
        };
        const t = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`timed out waiting for ${re}: ${out}`));
        }, ms);
        waiters.push(check);
        check();
      });
    },
  };
}

/** SIGTERM, then the exit */
export async function stopOrch(p: OrchProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  p.child.kill('SIGTERM');
  await p.exited;
}

export interface FreshDirServer {
  /** the working directory the commands run in (a user's checkout: the server's data in ./.orch) */
  dir: string;
  port: number;
  server: OrchProcess;
  /** the kubeconfig path the server printed */
  kubeconfig: string;
  /** `orch <args>` in the working directory; still running after the file's tests, it is stopped */
  orch(args: string[]): OrchProcess;
  /** the real kubectl with the printed kubeconfig */
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** a NodeAgentConfiguration file in the working directory with `port: 0` (the default 10250 is shared), for `--config` */
  agentConfigFile(): Promise<string>;
}

/**
 * `npm start` as the README runs it (`orch server`, data in ./.orch) in a fresh working directory, on a free port,
 * for the tests of a file; afterwards every process started is stopped and the directory removed
 */
export function useFreshDirServer(serverArgs: string[] = []): () => FreshDirServer {
  let ctx: FreshDirServer | undefined;
  const started: OrchProcess[] = [];
  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-fresh-'));
    const port = await freePort();
    const orch = (args: string[]) => {
      const p = spawnOrch(args, {}, dir);
      started.push(p);
      return p;
    };
    const server = orch(['server', '--secure-port', String(port), ...serverArgs]);
    const kubeconfig = (await server.waitFor(/^ {2}kubeconfig: (\S+)$/m, 60_000))[1]!;
    ctx = {
      dir, port, server, kubeconfig, orch,
      kubectl: (...args) => runKubectl(kubeconfig, args),
      async agentConfigFile() {
        const path = join(dir, 'agent.yaml');
        await writeFile(path, stringify({ apiVersion: 'nodeagent.config.orch.io/v1beta1', kind: 'NodeAgentConfiguration', port: 0, staticPodPath: join(dir, 'manifests') }));
        return path;
      },
    };
  }, 90_000);
  afterAll(async () => {
    for (const p of started.reverse()) await stopOrch(p);
    if (ctx) await rm(ctx.dir, { recursive: true, force: true });
  });
  return () => ctx!;
}
