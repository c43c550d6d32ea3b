// The agent's exec/attach over a plain SPDY/3.1 connection (src/nodeagent/streaming/remotecommand-spdy.ts,
// kubelet's httpstream.go): the command starts once the streams the request asked for are open, stdin and
// its FIN reach the runtime, output goes on its stream, and the end is the v4 Status on the error stream
// (v1–v3: a failure's message only) with every stream finished.
import { EventEmitter } from 'node:events';
import { createDeflate } from 'node:zlib';
import type * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import type { StreamInput, StreamOutput } from '../../src/nodeagent/runtime/types.js';
import type { ByteConn } from '../../src/nodeagent/streaming/byte-conn.js';
import { bridgeSpdyRemoteCommand, expectedStreams } from '../../src/nodeagent/streaming/remotecommand-spdy.js';
import { SPDY3_DICTIONARY } from '../../src/nodeagent/streaming/spdy.js';
import { dataFrame, dataFrames, headerBlock, synStream } from '../helpers/spdy-client.js';

/** a runtime stream that records what it is sent */
class FakeCall extends EventEmitter {
  sent: StreamInput[] = [];
  write(m: StreamInput): boolean {
    this.sent.push(m);
    return true;
  }
  cancel(): void {}
  end(): void {}
  pause(): void {}
  resume(): void {}
}

function session(protocol: string, io: { stdin: boolean; stdout: boolean; stderr: boolean; tty: boolean }) {
  const written: Buffer[] = [];
  let feed: (b: Buffer) => void = () => undefined;
  let closed = false;
  const conn: ByteConn = {
    write: (b) => void written.push(b),
    onData: (f) => (feed = f),
    onClose: () => undefined,
    close: () => (closed = true),
    backlog: () => 0,
    onDrain: () => undefined,
  };
  const calls: FakeCall[] = [];
  bridgeSpdyRemoteCommand(conn, protocol, io, () => {
    const c = new FakeCall();
    calls.push(c);
    return c as unknown as grpc.ClientDuplexStream<StreamInput, StreamOutput>;
  }, ['sh', '-c', 'x'], () => undefined);
  const z = createDeflate({ dictionary: SPDY3_DICTIONARY });
  const open = async (id: number, streamtype: string) => feed(synStream(id, await headerBlock(z, { streamtype })));
  return { written, calls, open, feed: (b: Buffer) => feed(b), closed: () => closed, done: () => z.close() };
}

describe('exec over SPDY/3.1 (the agent)', () => {
  it('expects the streams kubelet does', () => {
    const io = { stdin: true, stdout: true, stderr: true, tty: false };
    expect([...expectedStreams(io, 'v4.channel.k8s.io')].sort()).toEqual(['error', 'stderr', 'stdin', 'stdout']);
    expect([...expectedStreams({ ...io, tty: true }, 'v4.channel.k8s.io')].sort()).toEqual(['error', 'resize', 'stdin', 'stdout']);
    expect([...expectedStreams({ ...io, tty: true }, 'v2.channel.k8s.io')].sort()).toEqual(['error', 'stdin', 'stdout']);
  });

  it('starts once the streams are open, carries stdin and its end, and ends with the v4 Status', async () => {
    const s = session('v4.channel.k8s.io', { stdin: true, stdout: true, stderr: false, tty: false });
    await s.open(1, 'error');
    await s.open(3, 'stdout');
    expect(s.calls).toHaveLength(0);
    await s.open(5, 'stdin');
    expect(s.calls).toHaveLength(1);
    const call = s.calls[0]!;
    s.feed(dataFrame(5, 'input'));
    s.feed(dataFrame(5, '', true));
    expect(call.sent).toEqual([{ stdin: Buffer.from('input') }, { stdinClose: true }]);
    call.emit('data', { stdout: Buffer.from('out') });
    call.emit('data', { exited: true, exitCode: 2 });
    const frames = dataFrames(s.written);
    expect(frames.filter((f) => f.id === 3 && f.data.length > 0).map((f) => f.data.toString())).toEqual(['out']);
    const status = JSON.parse(frames.find((f) => f.id === 1 && f.data.length > 0)!.data.toString()) as Record<string, unknown>;
    expect(status).toMatchObject({ status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: '2' }] } });
    // both server streams finished, then the connection ends
    expect(frames.filter((f) => f.fin).map((f) => f.id).sort()).toEqual([1, 3]);
    expect(s.closed()).toBe(true);
    s.done();
  });

  it('writes nothing on the error stream on success in v2, and refuses a stream type it did not ask for', async () => {
    const s = session('v2.channel.k8s.io', { stdin: false, stdout: true, stderr: false, tty: false });
    await s.open(1, 'error');
    await s.open(3, 'stderr');
    await s.open(5, 'stdout');
    // the stderr stream was reset (RST_STREAM, type 3), the command runs with error and stdout
    expect(s.written.some((f) => (f[0]! & 0x80) !== 0 && f.readUInt16BE(2) === 3 && f.readUInt32BE(8) === 3)).toBe(true);
    expect(s.calls).toHaveLength(1);
    s.calls[0]!.emit('data', { exited: true, exitCode: 0 });
    expect(dataFrames(s.written).filter((f) => f.id === 1 && f.data.length > 0)).toEqual([]);
    s.done();
  });
});
