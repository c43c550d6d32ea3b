// Runs `orch <subcommand> …` as a real process (src/cli/main.ts through tsx), as a user runs the built command:
// its output so far, a wait for a line, its exit code.
import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

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
