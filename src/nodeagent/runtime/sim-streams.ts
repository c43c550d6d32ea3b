// The streaming calls of the simulated runtime (proto/runtime.proto
// ContainerLog, ExecStream, AttachStream, PortForwardStream; docs/nodeagent.md
// "Streams"). Exec runs a real process; port-forward connects to the port at
// the sandbox's loopback address (sim-network.ts), then, refused there, at
// 127.0.0.1: inside a real pod `localhost` is the pod's own, so a process
// bound to 127.0.0.1 is reachable by port-forward, and simulated sandboxes
// share the host's loopback.

import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { LogLine } from './sim-logs.js';
import { exitCodeOf, killProcessTree, mapMounts, processOptions } from './sim-process.js';
import { SimError, type SimState } from './sim-state.js';
import { execArgv } from './sim-sysctl.js';
import { HOST_LOOPBACK } from './sim-network.js';

type Obj = Record<string, unknown>;
const UNAVAILABLE = 14;
const FAILED_PRECONDITION = 9;
const INVALID_ARGUMENT = 3;

function fail(call: grpc.ServerWritableStream<Obj, Obj> | grpc.ServerDuplexStream<Obj, Obj>, e: unknown): void {
  const code = e instanceof SimError ? e.code : grpc.status.INTERNAL;
  call.emit('error', { code, details: (e as Error).message, message: (e as Error).message });
}

/** writes with back-pressure: resolves when the call can take more */
function writeTo(call: grpc.ServerWritableStream<Obj, Obj> | grpc.ServerDuplexStream<Obj, Obj>, msg: Obj): Promise<void> {
  if (call.write(msg)) return Promise.resolve();
  return new Promise((resolve) => call.once('drain', resolve));
}

const chunk = (l: LogLine): Obj => ({ timestamp: l.ts, stream: l.stream, data: l.data });

export function containerLog(state: SimState) {
  return (call: grpc.ServerWritableStream<Obj, Obj>): void => {
    let c;
    try {
      c = state.container(String(call.request.containerId ?? ''));
    } catch (e) {
      return fail(call, e);
    }
    // the head goes out at once, so a follower of an empty log knows the stream is open
    call.sendMetadata(new grpc.Metadata());
    const tail = Number(call.request.tailLines ?? -1);
    const sinceNs = Number(call.request.sinceTime ?? 0);
    // lines written while the snapshot is sent are queued, so none is lost or sent twice
    const queue: (LogLine | null)[] = [];
    let wake: (() => void) | undefined;
    let cancelled = false;
    const unfollow = call.request.follow
      ? c.log.follow((l) => {
          queue.push(l);
          wake?.();
        })
      : undefined;
    call.on('cancelled', () => {
      cancelled = true;
      unfollow?.();
      wake?.();
    });
    void (async () => {
      for (const l of c.log.read({ tail: tail < 0 ? undefined : tail, sinceNs: sinceNs || undefined })) {
        if (cancelled) return;
        await writeTo(call, chunk(l));
      }
      if (!unfollow) return call.end();
      for (;;) {
        if (cancelled) return;
        const next = queue.shift();
        if (next === undefined) {
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
          continue;
        }
        if (next === null) return call.end();
        if (sinceNs && next.ts < sinceNs) continue;
        await writeTo(call, chunk(next));
      }
    })().catch((e: unknown) => fail(call, e));
  };
}

interface StartMsg {
  containerId?: string;
  cmd?: string[];
  tty?: boolean;
  stdin?: boolean;
  stdout?: boolean;
  stderr?: boolean;
}

/** the first message of an exec or attach stream */
function onStart(call: grpc.ServerDuplexStream<Obj, Obj>, begin: (start: StartMsg) => void): void {
  call.once('data', (first: Obj) => {
    const start = first.start as StartMsg | null;
    if (!start?.containerId) return fail(call, new SimError(INVALID_ARGUMENT, 'the first message must carry start.containerId'));
    try {
      begin(start);
    } catch (e) {
      fail(call, e);
    }
  });
}

export function execStream(state: SimState) {
  return (call: grpc.ServerDuplexStream<Obj, Obj>): void =>
    onStart(call, (start) => {
      const c = state.container(start.containerId!);
      if (c.state !== 'CONTAINER_RUNNING') throw new SimError(FAILED_PRECONDITION, `container ${c.id} is not running (${c.state})`);
      const cmd = start.cmd ?? [];
      if (cmd.length === 0) throw new SimError(INVALID_ARGUMENT, 'exec needs a command');
      // no mount namespace: container paths in the command become host paths (sim-process.ts mapMounts)
      const argv = execArgv(cmd.map((a) => mapMounts(a, c.config.mounts)), state.sandbox(c.sandboxId).config.linux?.sysctls);
      const proc = spawn(argv[0]!, argv.slice(1), { ...processOptions(c.config), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
      let spawnError: Error | undefined;
      proc.on('error', (e) => (spawnError = e));
      proc.stdin!.on('error', () => undefined);
      if (!start.stdin) proc.stdin!.end();
      const pump = (stream: NodeJS.ReadableStream, key: 'stdout' | 'stderr', wanted: boolean) =>
        stream.on('data', (d: Buffer) => {
          if (!wanted) return;
          if (!call.write({ [key]: d })) {
            stream.pause();
            call.once('drain', () => stream.resume());
          }
        });
      pump(proc.stdout!, 'stdout', start.stdout !== false);
      pump(proc.stderr!, 'stderr', start.stderr !== false);
      call.on('data', (m: Obj) => {
        if (m.stdin && (m.stdin as Buffer).length > 0 && start.stdin) proc.stdin!.write(m.stdin as Buffer);
        if (m.stdinClose) proc.stdin!.end();
        // m.resize: no terminal (the simulator runs processes without a pty), nothing to resize
      });
      call.on('cancelled', () => killProcessTree(proc, 'SIGKILL'));
      call.on('end', () => proc.stdin!.end());
      proc.on('close', (code, signal) => {
        if (spawnError) {
          // as a runtime reports an executable it cannot start: on stderr, exit code 126/127
          const missing = (spawnError as NodeJS.ErrnoException).code === 'ENOENT';
          call.write({ stderr: Buffer.from(`exec failed: ${cmd[0]}: ${missing ? 'executable file not found in $PATH' : spawnError.message}\n`) });
          call.write({ exited: true, exitCode: missing ? 127 : 126 });
        } else call.write({ exited: true, exitCode: exitCodeOf(code, signal) });
        call.end();
      });
    });
}

export function attachStream(state: SimState) {
  return (call: grpc.ServerDuplexStream<Obj, Obj>): void =>
    onStart(call, (start) => {
      const c = state.container(start.containerId!);
      if (c.state !== 'CONTAINER_RUNNING') throw new SimError(FAILED_PRECONDITION, `container ${c.id} is not running (${c.state})`);
      // output from now on (what `kubectl attach` shows); the log keeps the rest
      const unfollow = c.log.follow((l) => {
        if (l === null) {
          call.write({ exited: true, exitCode: c.exitCode });
          call.end();
          return;
        }
        if ((l.stream === 'stdout' && start.stdout !== false) || (l.stream === 'stderr' && start.stderr !== false)) call.write({ [l.stream]: l.data });
      });
      call.on('data', (m: Obj) => {
        if (!start.stdin || !c.proc) return;
        if (m.stdin && (m.stdin as Buffer).length > 0) c.proc.stdin!.write(m.stdin as Buffer);
        if (m.stdinClose) c.proc.stdin!.end();
      });
      call.on('cancelled', unfollow);
    });
}

export function portForwardStream(state: SimState) {
  return (call: grpc.ServerDuplexStream<Obj, Obj>): void => {
    call.once('data', (first: Obj) => {
      const port = Number(first.port ?? 0);
      let address: string;
      try {
        const sb = state.sandbox(String(first.podSandboxId ?? ''));
        if (sb.state !== 'SANDBOX_READY') throw new SimError(FAILED_PRECONDITION, `pod sandbox ${sb.id} is not ready`);
        if (!(port > 0 && port < 65536)) throw new SimError(INVALID_ARGUMENT, `invalid port ${port}`);
        address = sb.loopback;
      } catch (e) {
        return fail(call, e);
      }
      // as a Go runtime's dial would (TCP_NODELAY is Go's default): forwarded bytes leave as they come
      let sock = connect({ host: address, port, noDelay: true });
      let connected = false;
      const onError = (e: NodeJS.ErrnoException) => {
        if (connected) return void call.end();
        if (e.code === 'ECONNREFUSED' && address !== HOST_LOOPBACK) {
          address = HOST_LOOPBACK;
          sock = connect({ host: address, port, noDelay: true });
          return void wire();
        }
        fail(call, new SimError(UNAVAILABLE, `failed to connect to localhost:${port} inside the pod sandbox: ${e.message}`));
      };
      // the socket's handlers; a second attempt gets them anew, the client's side (below) reads `sock` when it writes
      // what the client sends before the connection is made waits here, so a retry at 127.0.0.1 loses none of it
      let pending: Buffer[] | undefined = [];
      let clientDone = false;
      const wire = () => {
        sock.on('connect', () => {
          connected = true;
          for (const d of pending ?? []) sock.write(d);
          pending = undefined;
          if (clientDone) sock.end();
        });
        sock.on('error', onError);
        sock.on('data', (d: Buffer) => {
          if (!call.write({ data: d })) {
            sock.pause();
            call.once('drain', () => sock.resume());
          }
        });
        sock.on('end', () => {
          call.write({ close: true });
          call.end();
        });
      };
      wire();
      const finish = () => {
        clientDone = true;
        if (connected) sock.end();
      };
      call.on('data', (m: Obj) => {
        if (m.data && (m.data as Buffer).length > 0) {
          if (pending) pending.push(m.data as Buffer);
          else sock.write(m.data as Buffer);
        }
        if (m.close) finish();
      });
      call.on('end', finish);
      call.on('cancelled', () => sock.destroy());
    });
  };
}
