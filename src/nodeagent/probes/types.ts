// Container probes as the pod spec states them (core/v1 Probe) and what one
// probe run yields, with kubelet's defaults (pkg/apis/core/v1 defaults:
// period 10 s, timeout 1 s, success 1, failure 3). docs/nodeagent.md "Probes".

export type ProbeKind = 'startup' | 'liveness' | 'readiness';
export type PortRef = number | string;

export interface ProbeSpec {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port: PortRef; host?: string; scheme?: string; httpHeaders?: { name: string; value: string }[] };
  tcpSocket?: { port: PortRef; host?: string };
  grpc?: { port: number; service?: string };
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

/** the container fields probes read */
export interface ProbedContainer {
  name: string;
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: { name: string; value?: string }[];
  startupProbe?: ProbeSpec;
  livenessProbe?: ProbeSpec;
  readinessProbe?: ProbeSpec;
}

/**
 * one probe run, as kubelet's probers answer (pkg/probe): success, failure
 * and warning (a success worth an event: a redirect not followed) with their
 * output; `error` when the probe could not be run at all (its result is
 * thrown away, no threshold counts it)
 */
export interface Outcome {
  result: 'success' | 'failure' | 'warning' | 'error';
  output: string;
}

export interface Timing {
  initialDelayMs: number;
  periodMs: number;
  timeoutMs: number;
  successThreshold: number;
  failureThreshold: number;
}

/** kubelet's defaults; liveness and startup must have successThreshold 1 (validation), so it is forced */
export function timing(p: ProbeSpec, kind: ProbeKind): Timing {
  const pos = (v: number | undefined, d: number) => (typeof v === 'number' && v > 0 ? v : d);
  return {
    initialDelayMs: Math.max(0, p.initialDelaySeconds ?? 0) * 1000,
    periodMs: pos(p.periodSeconds, 10) * 1000,
    timeoutMs: pos(p.timeoutSeconds, 1) * 1000,
    successThreshold: kind === 'readiness' ? pos(p.successThreshold, 1) : 1,
    failureThreshold: pos(p.failureThreshold, 3),
  };
}

/** the probe's handler, or undefined when it names none */
export const handlerOf = (p: ProbeSpec): 'exec' | 'httpGet' | 'tcpSocket' | 'grpc' | undefined =>
  p.exec ? 'exec' : p.httpGet ? 'httpGet' : p.tcpSocket ? 'tcpSocket' : p.grpc ? 'grpc' : undefined;

/** `Liveness`, `Readiness`, `Startup`: kubelet's probeType String() in its event messages */
export const kindName = (k: ProbeKind) => `${k[0]!.toUpperCase()}${k.slice(1)}`;

/** kubelet's ResolveContainerPort: a number, or the container port of that name */
export function resolvePort(port: PortRef, c: ProbedContainer): number {
  let n: number;
  if (typeof port === 'number') n = port;
  else if (/^\d+$/.test(port)) n = Number(port);
  else {
    const found = c.ports?.find((p) => p.name === port);
    if (!found) throw new Error(`port ${port} not found`);
    n = found.containerPort;
  }
  if (!(n > 0 && n < 65536)) throw new Error(`invalid port number: ${n}`);
  return n;
}

/** Go's net.JoinHostPort */
export const joinHostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
