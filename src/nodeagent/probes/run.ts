// One run of a probe against one container (kubelet's prober.runProbe):
// exec through the runtime's ExecSync, httpGet/tcpSocket/grpc to the pod's
// address. The address is where the node reaches the pod: the runtime's
// host-reachable address when it reports one (the simulator's per-sandbox
// 127.x.y.z), else the pod IP; a probe's own `host` wins for httpGet and
// tcpSocket, as in kubelet.

import { expand, mappingFor } from '../expansion.js';
import { RuntimeCallError } from '../runtime/client.js';
import type { ExecSyncResponse } from '../runtime/types.js';
import { grpcProbe } from './grpc-probe.js';
import { httpProbe, tcpProbe } from './net-probes.js';
import { joinHostPort, type Outcome, type ProbeSpec, type ProbedContainer, resolvePort } from './types.js';

const DEADLINE_EXCEEDED = 4;

export interface ProbeTarget {
  container: ProbedContainer;
  containerId: string;
  /** where the node reaches the pod's network */
  address: string;
}

/** the runtime call exec probes need (RuntimeClient has it) */
export interface ExecRuntime {
  execSync(containerId: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResponse>;
}

export async function runProbe(p: ProbeSpec, t: ProbeTarget, runtime: ExecRuntime, timeoutMs: number): Promise<Outcome> {
  try {
    if (p.exec) {
      // kubelet's ExpandContainerCommandOnlyStatic: $(VAR) from the container's literal env values only
      const env = new Map((t.container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
      const cmd = (p.exec.command ?? []).map((a) => expand(a, mappingFor(env)));
      try {
        const r = await runtime.execSync(t.containerId, cmd, Math.ceil(timeoutMs / 1000));
        const output = Buffer.concat([r.stdout, r.stderr]).toString();
        return { result: r.exitCode === 0 ? 'success' : 'failure', output };
      } catch (e) {
        // kubelet's remote runtime turns DEADLINE_EXCEEDED into `command "…" timed out`, a failure
        if (e instanceof RuntimeCallError && e.code === DEADLINE_EXCEEDED) return { result: 'failure', output: `command ${JSON.stringify(cmd.join(' '))} timed out` };
        throw e;
      }
    }
    if (p.httpGet) {
      const g = p.httpGet;
      const scheme = (g.scheme ?? 'HTTP').toLowerCase();
      const port = resolvePort(g.port, t.container);
      const path = g.path ?? '';
      const url = new URL(`${scheme}://${joinHostPort(g.host || t.address, port)}${path.startsWith('/') ? path : `/${path}`}`);
      return await httpProbe(url, g.httpHeaders ?? [], timeoutMs);
    }
    if (p.tcpSocket) return await tcpProbe(p.tcpSocket.host || t.address, resolvePort(p.tcpSocket.port, t.container), timeoutMs);
    if (p.grpc) return await grpcProbe(t.address, resolvePort(p.grpc.port, t.container), p.grpc.service ?? '', timeoutMs);
    return { result: 'error', output: 'missing probe handler' };
  } catch (e) {
    return { result: 'error', output: e instanceof RuntimeCallError ? e.goError : (e as Error).message };
  }
}
