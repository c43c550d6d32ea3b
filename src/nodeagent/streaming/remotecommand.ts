// The WebSocket remote-command protocol of exec and attach (kube's
// `v4.channel.k8s.io` and `v5.channel.k8s.io`, what kubectl 1.32 speaks by
// default), bridged to the runtime's ExecStream / AttachStream.
// Every binary message starts with its channel: 0 stdin, 1 stdout, 2 stderr,
// 3 error (one Status, JSON, then the connection closes), 4 resize
// (`{"Width":w,"Height":h}`); v5 adds 255 = "the client closed channel N"
// (message [255, N]), which is how stdin's end reaches the process.
// The unversioned `channel.k8s.io` (kube's pre-v4 binary protocol, what the
// e2e tests' websocket client offers) frames the channels alike, but its
// error channel carries only a failure's message, as text, and nothing on
// success (kubelet's v1WriteStatusFunc).

import type * as grpc from '@grpc/grpc-js';
import type { WebSocket, RawData } from 'ws';
import type { StreamInput, StreamOutput } from '../runtime/types.js';
import { messageBuffer } from '../../core/ws-message.js';

export const REMOTE_COMMAND_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io'];
/** kube's preV4BinaryWebsocketProtocol */
const V1_PROTOCOL = 'channel.k8s.io';

export const STDIN = 0;
export const STDOUT = 1;
export const STDERR = 2;
export const ERROR = 3;
export const RESIZE = 4;
export const CLOSE = 255;

/** bytes queued on the WebSocket before the runtime stream is paused */
const HIGH_WATER = 1024 * 1024;

/** the Status sent on the error channel when the command ended (kube's remotecommand wording) */
export function exitStatus(code: number, cmd: string[]): Record<string, unknown> {
  if (code === 0) return { metadata: {}, status: 'Success' };
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${cmd.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

export function errorStatus(message: string): Record<string, unknown> {
  return { metadata: {}, status: 'Failure', message: `Internal error occurred: ${message}`, reason: 'InternalError', details: { causes: [{ message }] }, code: 500 };
}


/**
 * Runs one exec or attach session: `call` is the runtime stream, already sent its
 * `start`; `cmd` names the command in the exit Status (empty for attach).
 */
export function bridgeRemoteCommand(ws: WebSocket, call: grpc.ClientDuplexStream<StreamInput, StreamOutput>, cmd: string[], log: (m: string) => void): void {
  let finished = false;
  let queued = 0;
  const send = (channel: number, data: Buffer) => {
    if (ws.readyState !== 1) return;
    const msg = Buffer.allocUnsafe(data.length + 1);
    msg[0] = channel;
    data.copy(msg, 1);
    queued += msg.length;
    if (queued > HIGH_WATER) call.pause();
    ws.send(msg, { binary: true }, () => {
      queued -= msg.length;
      if (queued <= HIGH_WATER / 2) call.resume();
    });
  };
  const finish = (status: Record<string, unknown>) => {
    if (finished) return;
    finished = true;
    if (ws.protocol !== V1_PROTOCOL) send(ERROR, Buffer.from(JSON.stringify(status)));
    else if (status.status !== 'Success') send(ERROR, Buffer.from(String(status.message ?? '')));
    ws.close(1000);
  };

  call.on('data', (m: StreamOutput) => {
    if (m.stdout?.length) send(STDOUT, m.stdout);
    if (m.stderr?.length) send(STDERR, m.stderr);
    if (m.exited) finish(exitStatus(m.exitCode, cmd));
  });
  call.on('error', (e: Error & { code?: number; details?: string }) => {
    // CANCELLED: we ended it because the client left
    if (e.code !== 1) finish(errorStatus(e.details ?? e.message));
  });
  call.on('end', () => finish(errorStatus('the runtime ended the stream without an exit status')));

  ws.on('message', (raw: RawData) => {
    const data = messageBuffer(raw);
    if (data.length === 0 || finished) return;
    const payload = data.subarray(1);
    switch (data[0]) {
      case STDIN:
        if (payload.length > 0) call.write({ stdin: payload });
        break;
      case RESIZE:
        try {
          const size = JSON.parse(payload.toString()) as { Width?: number; Height?: number };
          call.write({ resize: { width: Number(size.Width ?? 0), height: Number(size.Height ?? 0) } });
        } catch {
          log('exec: a resize message that is not JSON was ignored');
        }
        break;
      case CLOSE:
        if (payload[0] === STDIN) call.write({ stdinClose: true });
        break;
      default:
        // the client writes nothing else; other channels are ignored as kube does
        break;
    }
  });
  ws.on('close', () => {
    if (!finished) {
      finished = true;
      call.cancel();
    } else call.end();
  });
  ws.on('error', () => undefined);
}
