// exec and attach over a plain `Upgrade: SPDY/3.1` connection, as the
// kubelet serves them (pkg/kubelet/cri/streaming/remotecommand/httpstream.go):
// the protocol is the first of the client's `X-Stream-Protocol-Version`
// values the agent speaks (SPDY_REMOTE_COMMAND_PROTOCOLS). The client opens
// one SPDY stream per channel, named by the header `streamtype` (error,
// stdin, stdout, stderr, resize); the command starts once every stream the
// request asked for is there: error always, stdin/stdout as asked, stderr
// unless there is a terminal, resize with a terminal (v3 and v4).
// stdin's FIN is the end of the process's input; resize carries JSON
// `{"Width":w,"Height":h}` objects back to back. At the end, v4 writes the
// exit Status (JSON) on the error stream, v1–v3 only a failure's message;
// then every stream is finished (FIN) and the connection ends.

import type * as grpc from '@grpc/grpc-js';
import type { StreamInput, StreamOutput } from '../runtime/types.js';
import type { ByteConn } from './byte-conn.js';
import { errorStatus, exitStatus } from './remotecommand.js';
import { SpdyServerSession } from './spdy.js';

/** output queued on the connection before the runtime stream is paused (as the WebSocket bridge does) */
const HIGH_WATER = 1024 * 1024;

/** kubelet's order; client-go offers v4 first */
export const SPDY_REMOTE_COMMAND_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

export interface RemoteCommandIo {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';

/** the streams the client must open before the command runs */
export function expectedStreams(io: RemoteCommandIo, protocol: string): Set<StreamType> {
  const want = new Set<StreamType>(['error']);
  if (io.stdin) want.add('stdin');
  if (io.stdout) want.add('stdout');
  // kubelet: a terminal has no separate stderr
  if (io.stderr && !io.tty) want.add('stderr');
  if (io.tty && (protocol === 'v4.channel.k8s.io' || protocol === 'v3.channel.k8s.io')) want.add('resize');
  return want;
}

/**
 * Runs one exec or attach session on `conn`: `start` opens the runtime stream (already sent its
 * `start` message) once the client's streams are there; `cmd` names the command in the exit Status.
 */
export function bridgeSpdyRemoteCommand(
  conn: ByteConn,
  protocol: string,
  io: RemoteCommandIo,
  start: () => grpc.ClientDuplexStream<StreamInput, StreamOutput>,
  cmd: string[],
  log: (m: string) => void,
): void {
  const want = expectedStreams(io, protocol);
  const ids = new Map<StreamType, number>();
  let call: grpc.ClientDuplexStream<StreamInput, StreamOutput> | undefined;
  let finished = false;
  let resizeText = '';
  const session = new SpdyServerSession((bytes) => conn.write(bytes), {
    onStream(id, headers) {
      session.reply(id);
      const type = headers.get('streamtype') as StreamType | undefined;
      if (!type || !want.has(type) || ids.has(type)) {
        // kubelet: "unexpected stream type"; a stream asked for twice is refused the same way
        session.reset(id, 1 /* PROTOCOL_ERROR */);
        return;
      }
      ids.set(type, id);
      if (ids.size === want.size && !call) run();
    },
    onData(id, data, fin) {
      if (!call || finished) return;
      if (id === ids.get('stdin')) {
        if (data.length > 0) call.write({ stdin: Buffer.from(data) });
        if (fin) call.write({ stdinClose: true });
      } else if (id === ids.get('resize')) resize(data);
    },
    onReset(id) {
      if (id === ids.get('stdin') && call && !finished) call.write({ stdinClose: true });
    },
    onEnd(reason) {
      log(`exec: ${reason}`);
      conn.close();
    },
  });

  const resize = (data: Buffer) => {
    resizeText += data.toString();
    // the objects are flat: each ends at its first `}`
    for (let end = resizeText.indexOf('}'); end >= 0 && call; end = resizeText.indexOf('}')) {
      const one = resizeText.slice(0, end + 1);
      resizeText = resizeText.slice(end + 1);
      try {
        const size = JSON.parse(one) as { Width?: number; Height?: number };
        call.write({ resize: { width: Number(size.Width ?? 0), height: Number(size.Height ?? 0) } });
      } catch {
        log('exec: a resize message that is not JSON was ignored');
      }
    }
  };

  const out = (type: StreamType, data: Buffer | undefined) => {
    const id = ids.get(type);
    if (id === undefined || !data || data.length === 0) return;
    session.data(id, data);
    if (conn.backlog() > HIGH_WATER) call?.pause();
  };
  conn.onDrain(() => call?.resume());

  const finish = (status: Record<string, unknown>) => {
    if (finished) return;
    finished = true;
    const errorId = ids.get('error')!;
    if (protocol === 'v4.channel.k8s.io') session.data(errorId, Buffer.from(JSON.stringify(status)));
    else if (status.status !== 'Success') session.data(errorId, Buffer.from(String(status.message ?? '')));
    // every stream of ours ends, so the client's copies of stdout and stderr see their end
    for (const [type, id] of ids) if (type !== 'stdin' && type !== 'resize') session.data(id, Buffer.alloc(0), true);
    conn.close();
  };

  function run(): void {
    const c = start();
    call = c;
    c.on('data', (m: StreamOutput) => {
      out('stdout', m.stdout);
      out('stderr', m.stderr);
      if (m.exited) finish(exitStatus(m.exitCode, cmd));
    });
    c.on('error', (e: Error & { code?: number; details?: string }) => {
      // CANCELLED: we ended it because the client left
      if (e.code !== 1) finish(errorStatus(e.details ?? e.message));
    });
    c.on('end', () => finish(errorStatus('the runtime ended the stream without an exit status')));
  }

  conn.onData((bytes) => session.feed(bytes));
  conn.onClose(() => {
    if (!call) return;
    if (!finished) {
      finished = true;
      call.cancel();
    } else call.end();
  });
}
