// Container lifecycle hooks (core/v1 Lifecycle; kubelet 1.32's
// pkg/kubelet/lifecycle/handlers.go): `postStart` runs right after the
// container started, `preStop` before it is stopped. A handler is `exec` (the
// runtime's ExecSync in the container, no timeout of its own: kubelet passes 0),
// `httpGet` (a GET to `host`, else the pod's address; only a failure to get an
// answer is an error — kubelet does not look at the status code) or `sleep`.
// A failed hook answers kubelet's message, which the caller records as
// FailedPostStartHook / FailedPreStopHook.

import type { Clock } from './clock.js';
import { formatPod } from './events/kubelet-events.js';
import { httpProbe } from './probes/net-probes.js';
import type { ExecRuntime } from './probes/run.js';
import { joinHostPort, type PortRef, type ProbedContainer, resolvePort } from './probes/types.js';
import { RuntimeCallError } from './runtime/client.js';

export interface LifecycleHandler {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port: PortRef; host?: string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  sleep?: { seconds: number };
}
export interface Lifecycle {
  postStart?: LifecycleHandler;
  preStop?: LifecycleHandler;
}

export interface HookTarget {
  pod: { metadata: { name: string; namespace?: string; uid?: string } };
  container: ProbedContainer;
  containerId: string;
  /** where the node reaches the pod (httpGet without `host`) */
  address: () => Promise<string>;
}

/** an httpGet hook waits at most this long for an answer (kubelet's client has no timeout; a preStop is bounded by the grace period anyway) */
const HTTP_HOOK_TIMEOUT_MS = 30_000;

/** runs the handler; undefined on success, else kubelet's failure message */
export async function runHook(h: LifecycleHandler, t: HookTarget, runtime: ExecRuntime, clock: Clock): Promise<string | undefined> {
  const who = `for Container ${JSON.stringify(t.container.name)} in Pod ${JSON.stringify(formatPod(t.pod))}`;
  if (h.exec) {
    const cmd = h.exec.command ?? [];
    let err: string;
    let output = '';
    try {
      const r = await runtime.execSync(t.containerId, cmd, 0);
      if (r.exitCode === 0) return undefined;
      output = Buffer.concat([r.stdout, r.stderr]).toString();
      // the CRI client's CodeExitError text
      err = `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString()}`;
    } catch (e) {
      err = e instanceof RuntimeCallError ? e.goError : (e as Error).message;
    }
    return `Exec lifecycle hook ([${cmd.join(' ')}]) ${who} failed - error: ${err}, message: ${JSON.stringify(output)}`;
  }
  if (h.httpGet) {
    const g = h.httpGet;
    const path = g.path ?? '';
    let err: string | undefined;
    try {
      const url = new URL(`${(g.scheme ?? 'HTTP').toLowerCase()}://${joinHostPort(g.host || (await t.address()), resolvePort(g.port, t.container))}${path.startsWith('/') ? path : `/${path}`}`);
      const o = await httpProbe(url, g.httpHeaders ?? [], HTTP_HOOK_TIMEOUT_MS);
      // an answer of any status is a success: only the probe's transport failures count
      if (o.result === 'failure' && !o.output.startsWith('HTTP probe failed with statuscode')) err = o.output;
    } catch (e) {
      err = (e as Error).message;
    }
    return err === undefined ? undefined : `HTTP lifecycle hook (${path}) ${who} failed - error: ${err}`;
  }
  if (h.sleep) await new Promise<void>((r) => clock.setTimeout(() => r(), Math.max(0, h.sleep!.seconds) * 1000));
  return undefined;
}
