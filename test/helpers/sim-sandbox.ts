// A simulated runtime on a Unix socket in a temp dir, a client, and one pod
// sandbox with busybox pulled: the set-up of tests of the runtime's calls
// (test/nodeagent/runtime-streams.test.ts, lifecycle-hooks.test.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';

export interface SimSandbox {
  rt: RuntimeClient;
  sim: RunningSim;
  sandbox: string;
  sbc: { metadata: { name: string; uid: string; namespace: string; attempt: number }; linux?: { sysctls?: Record<string, string> } };
  /** starts `sh -c script` as a new container of the sandbox; its id */
  run(script: string): Promise<string>;
}

/**
 * started before the enclosing suite's tests, stopped after them; `requestTimeoutMs`: the client's default call timeout;
 * `sysctls`: the sandbox's (CRI LinuxPodSandboxConfig.sysctls)
 */
export function useSimSandbox(uid: string, requestTimeoutMs?: number, sysctls?: Record<string, string>): SimSandbox {
  let dir = '';
  const s = {
    sbc: { metadata: { name: 'p', uid, namespace: 'default', attempt: 0 }, ...(sysctls ? { linux: { sysctls } } : {}) },
    async run(script: string): Promise<string> {
      const id = await s.rt.createContainer(s.sandbox, { metadata: { name: `c${Math.random()}`, attempt: 0 }, image: { image: 'busybox' }, command: ['sh', '-c', script] }, s.sbc);
      await s.rt.startContainer(id);
      return id;
    },
  } as SimSandbox;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-sim-'));
    s.sim = await startRuntimeSim(join(dir, 'runtime.sock'));
    s.rt = new RuntimeClient(`unix://${s.sim.socket}`, undefined, requestTimeoutMs);
    await s.rt.pullImage('busybox');
    s.sandbox = await s.rt.runPodSandbox(s.sbc);
  });
  afterAll(async () => {
    s.rt.close();
    await s.sim.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return s;
}
