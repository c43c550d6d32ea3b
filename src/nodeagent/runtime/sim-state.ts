// The simulated runtime's state (`orch runtime-sim`): sandboxes, containers
// and images as data. A container "runs" its command:
//   `true` exits 0, `false` exits 1, `exit N` / `sh -c "exit N"` exits N, `sleep S` exits 0 after S
//   seconds; any other `sh -c <script>`, and `echo …`, runs as a real process on the host (its output is the
//   container's log, see sim-process.ts); an nginx image without a command serves nginx's welcome
//   page (sim-nginx.ts); a command whose argv[0] the host has runs as a real process too
//   (sim-host-command.ts), except `sysctl <name>…`, answered with the sandbox's sysctls (sim-sysctl.ts);
//   the agnhost image's `/agnhost pause|entrypoint-tester|mounttest` is emulated (sim-agnhost.ts), its
//   ENTRYPOINT and CMD filling in a config without command (sim-images.ts);
//   anything else runs until stopped. Memory use is derived
//   from the image name (resource usage: sim-stats.ts).
// Errors are thrown as SimError carrying a gRPC status code.

import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ContainerLog } from './sim-logs.js';
import { type Clock, systemClock } from '../clock.js';
import { killProcessTree, realScript, startContainerProcess } from './sim-process.js';
import { hostCommandScript } from './sim-host-command.js';
import { sysctlScript } from './sim-sysctl.js';
import { imageUserFields } from './sim-user.js';
import { agnhostArgv, startAgnhost } from './sim-agnhost.js';
import { withImageDefaults } from './sim-images.js';
import { type EmulatedService, emulatesNginx, startNginx } from './sim-nginx.js';
import { fnv as hash, sandboxLoopback } from './sim-network.js';
import type { ContainerConfig, ContainerState, ContainerStatus, Image, PodSandboxConfig, PodSandboxState } from './types.js';

export class SimError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}
const NOT_FOUND = 5;
const FAILED_PRECONDITION = 9;
const INVALID_ARGUMENT = 3;

export interface SimSandbox {
  id: string;
  config: PodSandboxConfig;
  state: PodSandboxState;
  createdAt: number;
  ip: string;
  /** the sandbox's own loopback address, where the node reaches it (sim-network.ts) */
  loopback: string;
}
export interface SimContainer {
  id: string;
  sandboxId: string;
  config: ContainerConfig;
  state: ContainerState;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  reason: string;
  memoryBytes: number;
  /** the simulated exit's timer on the state's clock */
  timer?: unknown;
  /** what the container's process wrote; closed when it ends */
  log: ContainerLog;
  /** the real process of an `sh -c <script>` container */
  proc?: ChildProcess;
  /** the highest cumulative CPU reported, ns (sim-stats.ts) */
  cpuSeen?: number;
  /** an image the simulator emulates in-process (sim-nginx.ts, sim-agnhost.ts) */
  service?: EmulatedService;
  /** the exit code SIGTERM ends an emulated program with (agnhost pause: 2), else 143 */
  sigtermExit?: number;
}

const ns = (ms: number) => ms * 1_000_000;
const newId = () => randomBytes(16).toString('hex');

/** how the simulated process of a container behaves: exit code and run time, or undefined = runs until stopped */
export function simulatedExit(config: ContainerConfig): { code: number; afterMs: number } | undefined {
  let argv = [...(config.command ?? []), ...(config.args ?? [])];
  if ((argv[0] === 'sh' || argv[0] === '/bin/sh') && argv[1] === '-c' && argv.length === 3) argv = argv[2]!.trim().split(/\s+/);
  if (argv.length === 0) return undefined;
  if (argv[0] === 'true') return { code: 0, afterMs: 50 };
  if (argv[0] === 'false') return { code: 1, afterMs: 50 };
  if (argv[0] === 'exit' && /^\d+$/.test(argv[1] ?? '')) return { code: Number(argv[1]), afterMs: 50 };
  if (argv[0] === 'sleep' && /^\d+(\.\d+)?$/.test(argv[1] ?? '')) return { code: 0, afterMs: Number(argv[1]) * 1000 };
  return undefined;
}

export class SimState {
  readonly sandboxes = new Map<string, SimSandbox>();
  readonly containers = new Map<string, SimContainer>();
  readonly images = new Map<string, Image>();
  private nextIp = 2;

  private readonly now: () => number;

  /** `clock`: the agent's port (../clock.ts); timestamps and simulated exits run on it */
  constructor(readonly clock: Clock = systemClock) {
    this.now = () => clock.now();
  }

  /** stops a container's simulated exit */
  cancelExit(c: SimContainer): void {
    if (c.timer !== undefined) this.clock.clearTimeout(c.timer);
    c.timer = undefined;
  }

  runSandbox(config: PodSandboxConfig): string {
    if (!config?.metadata?.name) throw new SimError(INVALID_ARGUMENT, 'sandbox config needs metadata.name');
    const id = newId();
    const taken = new Set([...this.sandboxes.values()].map((s) => s.loopback));
    this.sandboxes.set(id, { id, config, state: 'SANDBOX_READY', createdAt: ns(this.now()), ip: `10.88.0.${this.nextIp++ % 250}`, loopback: sandboxLoopback(id, taken) });
    return id;
  }

  sandbox(id: string): SimSandbox {
    const s = this.sandboxes.get(id);
    if (!s) throw new SimError(NOT_FOUND, `pod sandbox ${id} not found`);
    return s;
  }

  stopSandbox(id: string): void {
    const s = this.sandboxes.get(id);
    if (!s) return; // idempotent, as CRI
    for (const c of this.containers.values()) if (c.sandboxId === id) this.stop(c, 137);
    s.state = 'SANDBOX_NOTREADY';
  }

  removeSandbox(id: string): void {
    this.stopSandbox(id);
    for (const c of [...this.containers.values()]) if (c.sandboxId === id) this.containers.delete(c.id);
    this.sandboxes.delete(id);
  }

  createContainer(sandboxId: string, config: ContainerConfig): string {
    const sb = this.sandbox(sandboxId);
    if (sb.state !== 'SANDBOX_READY') throw new SimError(FAILED_PRECONDITION, `pod sandbox ${sandboxId} is not ready`);
    const image = config?.image?.image;
    if (!image) throw new SimError(INVALID_ARGUMENT, 'container config needs an image');
    if (!this.images.has(image)) throw new SimError(NOT_FOUND, `image ${image} not present; pull it first`);
    const seccomp = config.linux?.securityContext?.seccomp;
    if (seccomp?.profileType === 'Localhost' && !seccomp.profileJson) {
      throw new SimError(INVALID_ARGUMENT, `seccomp profile ${seccomp.localhostRef ?? ''} has no content`);
    }
    // containerd's process args: the image's ENTRYPOINT and CMD where the config leaves them out (sim-images.ts)
    config = withImageDefaults(config);
    const id = newId();
    const memoryBytes = (4 + (hash(image) % 60)) * 1024 * 1024;
    // as containerd does: HOSTNAME is the sandbox's hostname unless the container sets it
    const hostname = sb.config.hostname;
    if (hostname && !config.envs?.some((e) => e.key === 'HOSTNAME')) config = { ...config, envs: [{ key: 'HOSTNAME', value: hostname }, ...(config.envs ?? [])] };
    this.containers.set(id, { id, sandboxId, config, state: 'CONTAINER_CREATED', createdAt: ns(this.now()), startedAt: 0, finishedAt: 0, exitCode: 0, reason: '', memoryBytes, log: new ContainerLog(this.now) });
    return id;
  }

  container(id: string): SimContainer {
    const c = this.containers.get(id);
    if (!c) throw new SimError(NOT_FOUND, `container ${id} not found`);
    return c;
  }

  startContainer(id: string): void {
    const c = this.container(id);
    if (c.state !== 'CONTAINER_CREATED') throw new SimError(FAILED_PRECONDITION, `container ${id} is ${c.state}, not created`);
    c.state = 'CONTAINER_RUNNING';
    c.startedAt = ns(this.now());
    const exit = simulatedExit(c.config);
    const onExit = (code: number, reason: string) => this.exit(c, code, reason);
    const argv = [...(c.config.command ?? []), ...(c.config.args ?? [])];
    const agnhost = exit ? undefined : agnhostArgv(c.config);
    const emulated = agnhost && startAgnhost(c, agnhost, this.clock, (code) => this.exit(c, code, code === 0 ? 'Completed' : 'Error'));
    if (emulated) {
      c.service = emulated;
      c.sigtermExit = emulated.sigtermExit;
      return;
    }
    const script = exit ? undefined : (realScript(c.config) ?? sysctlScript(argv, this.sandbox(c.sandboxId).config.linux?.sysctls) ?? hostCommandScript(c.config));
    if (script !== undefined) startContainerProcess(c, script, onExit);
    else if (!exit && emulatesNginx(c.config)) c.service = startNginx(c, this.sandbox(c.sandboxId).loopback, this.now);
    else if (exit) {
      // the port's timers never keep the process alive
      c.timer = this.clock.setTimeout(() => this.exit(c, exit.code, exit.code === 0 ? 'Completed' : 'Error'), exit.afterMs);
    }
  }

  /** the simulated process ended */
  exit(c: SimContainer, code: number, reason: string): void {
    if (c.state !== 'CONTAINER_RUNNING') return;
    this.cancelExit(c);
    c.state = 'CONTAINER_EXITED';
    c.exitCode = code;
    c.reason = reason;
    c.finishedAt = ns(this.now());
    c.log.close();
    if (c.proc) killProcessTree(c.proc, 'SIGKILL');
    c.service?.stop();
  }

  stop(c: SimContainer, code = 143): void {
    if (c.state === 'CONTAINER_CREATED') {
      c.state = 'CONTAINER_EXITED';
      c.finishedAt = ns(this.now());
      c.log.close();
      return;
    }
    if (c.proc) killProcessTree(c.proc, 'SIGTERM');
    // a simulated process ends on SIGTERM at once: 143 = 128 + 15, or the emulated program's own code
    this.exit(c, code === 143 ? (c.sigtermExit ?? code) : code, 'Error');
  }

  /**
   * CRI StopContainer with its timeout: a real process gets SIGTERM and up to `timeoutS` seconds to end by
   * itself — with its own exit code, so a SIGTERM trap that exits 0 is `Completed` — then SIGKILL (137), as
   * containerd does. Simulated and emulated containers, and a timeout of 0, end at once (stop()).
   */
  async stopWithin(c: SimContainer, timeoutS: number): Promise<void> {
    const proc = c.proc;
    if (c.state !== 'CONTAINER_RUNNING' || !proc || timeoutS <= 0 || proc.exitCode !== null || proc.signalCode !== null) return this.stop(c);
    killProcessTree(proc, 'SIGTERM');
    await new Promise<void>((resolve) => {
      const t = this.clock.setTimeout(() => {
        this.exit(c, 137, 'Error');
        resolve();
      }, timeoutS * 1000);
      // the process's own 'close' handler (startContainerProcess) has recorded its exit by then
      proc.once('close', () => {
        this.clock.clearTimeout(t);
        resolve();
      });
    });
  }

  removeContainer(id: string): void {
    const c = this.containers.get(id);
    if (!c) return;
    if (c.state === 'CONTAINER_RUNNING') throw new SimError(FAILED_PRECONDITION, `container ${id} is running; stop it first`);
    this.containers.delete(id);
  }

  containerStatus(id: string): ContainerStatus {
    const c = this.container(id);
    const image = c.config.image.image;
    return {
      id: c.id,
      metadata: c.config.metadata,
      state: c.state,
      createdAt: c.createdAt,
      startedAt: c.startedAt,
      finishedAt: c.finishedAt,
      exitCode: c.exitCode,
      image: { image },
      imageRef: this.images.get(image)?.id ?? '',
      reason: c.reason,
      message: '',
      labels: c.config.labels ?? {},
      annotations: c.config.annotations ?? {},
    };
  }

  pullImage(image: string): string {
    if (!/^[a-z0-9][a-z0-9._\-/:@]*$/.test(image)) throw new SimError(INVALID_ARGUMENT, `invalid image reference "${image}"`);
    let img = this.images.get(image);
    if (!img) {
      const digest = `sha256:${hash(image).toString(16).padStart(8, '0').repeat(8)}`;
      img = { id: digest, repoTags: [image.includes(':') ? image : `${image}:latest`], repoDigests: [`${image.split(':')[0]}@${digest}`], size: 1_000_000 + (hash(image) % 50_000_000), ...imageUserFields(image) };
      this.images.set(image, img);
    }
    return img.id;
  }
}
