// Termination messages (spec 002 "Pods"; kubelet 1.32's kuberuntime): before
// a container is created the agent makes an empty file for it,
// `<root-dir>/pods/<uid>/containers/<name>/<attempt>` (mode 0666, so any user
// of the container may write it), and mounts it at the container's
// `terminationMessagePath`, as kubelet does. When the container has exited,
// `state.terminated.message` is the file's last 4096 bytes
// (kubecontainer.MaxContainerTerminationMessageLength, tail.ReadAtMost); with
// policy `FallbackToLogsOnError`, an exit code other than 0 and an empty or
// missing file, it is the log's last 80 lines, at most their last 2048 bytes
// (readLastStringFromContainerLogs). A pod's messages together stay within
// 12 KiB: each is cut to its first 12288 / (containers + init containers)
// bytes, as kubelet's status manager does (normalizeStatus,
// MaxPodTerminationMessageLogLength). Exited containers do not change, so each
// message is read once and kept until its pod is removed.

import { chmod, mkdir, open, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContainerLogChunk, ContainerLogRequest, ContainerStatus, Mount } from './runtime/types.js';

const MAX_MESSAGE_BYTES = 4096;
const MAX_LOG_BYTES = 2048;
const MAX_LOG_LINES = 80;
const MAX_POD_BYTES = 12 * 1024;

/** how many bytes of its message each container of a pod with `containers` containers and init containers keeps */
export const bytesPerStatus = (containers: number): number => (containers > 0 ? Math.floor(MAX_POD_BYTES / containers) : MAX_POD_BYTES);

/** the container fields the message depends on (core/v1 Container; the API defaults both) */
export interface TerminationMessageSpec {
  name: string;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
}

/** the runtime's log stream (RuntimeClient.containerLog) */
export interface LogSource {
  containerLog(req: ContainerLogRequest): NodeJS.ReadableStream;
}

export class TerminationMessages {
  /** `<uid>/<container id>` → the message of an exited container */
  private readonly messages = new Map<string, string>();

  constructor(private readonly rootDir: string, private readonly runtime: LogSource) {}

  private hostPath(uid: string, name: string, attempt: number): string {
    return join(this.rootDir, 'pods', uid, 'containers', name, String(attempt));
  }

  /** the mount of a new attempt's message file (none when the container names no path) */
  async prepare(uid: string, c: TerminationMessageSpec, attempt: number): Promise<Mount[]> {
    if (!c.terminationMessagePath) return [];
    const hostPath = this.hostPath(uid, c.name, attempt);
    await mkdir(join(hostPath, '..'), { recursive: true });
    await writeFile(hostPath, '');
    await chmod(hostPath, 0o666);
    return [{ containerPath: c.terminationMessagePath, hostPath }];
  }

  /** reads the message of an exited container once, its first `limit` bytes kept (bytesPerStatus); get() then answers it */
  async load(uid: string, c: TerminationMessageSpec, s: ContainerStatus, limit: number): Promise<void> {
    const key = `${uid}/${s.id}`;
    if (s.state !== 'CONTAINER_EXITED' || this.messages.has(key)) return;
    const fallback = c.terminationMessagePolicy === 'FallbackToLogsOnError' && s.exitCode !== 0;
    let message = c.terminationMessagePath ? await readTail(this.hostPath(uid, c.name, s.metadata.attempt), MAX_MESSAGE_BYTES) : '';
    if (!message && fallback) message = await this.logTail(s.id);
    this.messages.set(key, Buffer.from(message).subarray(0, limit).toString());
  }

  get(uid: string, id: string): string {
    return this.messages.get(`${uid}/${id}`) ?? '';
  }

  forget(uid: string): void {
    for (const k of this.messages.keys()) if (k.startsWith(`${uid}/`)) this.messages.delete(k);
  }

  private logTail(id: string): Promise<string> {
    return new Promise((resolve) => {
      const parts: Buffer[] = [];
      const s = this.runtime.containerLog({ containerId: id, follow: false, tailLines: MAX_LOG_LINES });
      s.on('data', (c: ContainerLogChunk) => parts.push(c.data));
      s.on('end', () => resolve(lastBytes(Buffer.concat(parts), MAX_LOG_BYTES)));
      // a log that cannot be read gives no message, as kubelet's ReadLogs error does
      s.on('error', () => resolve(''));
    });
  }
}

const lastBytes = (b: Buffer, max: number) => b.subarray(Math.max(0, b.length - max)).toString();

/** the last `max` bytes of a file; a missing file is no message */
async function readTail(path: string, max: number): Promise<string> {
  let f;
  try {
    f = await open(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    return `Error on reading termination log ${path}: ${(e as Error).message}`;
  }
  try {
    const { size } = await f.stat();
    const buf = Buffer.alloc(Math.min(size, max));
    await f.read(buf, 0, buf.length, Math.max(0, size - max));
    return buf.toString();
  } finally {
    await f.close();
  }
}
