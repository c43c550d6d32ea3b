// The container's user in the simulated runtime (src/nodeagent/runtime/sim-user.ts): the image
// catalog's users in ImageStatus, and — the simulator running as root — a container's script and its
// exec'd commands running as the CRI config's run_as_user / run_as_group, reaching its mounts through
// a private (0700) parent, with `/` as its working directory and HOME; a container without a user
// still runs as the simulator.
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/nodeagent/runtime/client.js';
import { type RunningSim, startRuntimeSim } from '../../src/nodeagent/runtime/sim-server.js';
import { imageRepository, imageUserFields, processUser, userFields } from '../../src/nodeagent/runtime/sim-user.js';
import type { ContainerConfig } from '../../src/nodeagent/runtime/types.js';
import { eventually } from '../helpers/eventually.js';

const BUSYBOX = 'registry.k8s.io/e2e-test-images/busybox:1.36.1-1';
const NONROOT = 'registry.k8s.io/e2e-test-images/nonroot:1.4';
const as = (uid?: number, gid?: number): ContainerConfig['linux'] => ({
  securityContext: { ...(uid === undefined ? {} : { runAsUser: { value: uid } }), ...(gid === undefined ? {} : { runAsGroup: { value: gid } }) },
});
const cfg = (linux?: ContainerConfig['linux']): ContainerConfig => ({ metadata: { name: 'c', attempt: 0 }, image: { image: BUSYBOX }, ...(linux ? { linux } : {}) });

describe('image users', () => {
  it("parses an image config's USER as containerd does: a number is the uid, else the name", () => {
    expect(userFields('1234')).toEqual({ uid: { value: 1234 } });
    expect(userFields('65535:65535')).toEqual({ uid: { value: 65535 } });
    expect(userFields('nobody:nogroup')).toEqual({ username: 'nobody' });
    expect(userFields('')).toEqual({});
    expect(userFields(undefined)).toEqual({});
  });
  it('knows the users of the images kube tests as non-root, by repository', () => {
    expect(imageRepository('registry.k8s.io/e2e-test-images/nonroot:1.4')).toBe('registry.k8s.io/e2e-test-images/nonroot');
    expect(imageRepository('localhost:5000/x/y@sha256:abc')).toBe('localhost:5000/x/y');
    expect(imageRepository('localhost:5000/x')).toBe('localhost:5000/x');
    expect(imageUserFields(NONROOT)).toEqual({ uid: { value: 1234 } });
    expect(imageUserFields('registry.k8s.io/pause:3.10')).toEqual({ uid: { value: 65535 } });
    expect(imageUserFields(BUSYBOX)).toEqual({});
    expect(imageUserFields('registry.k8s.io/e2e-test-images/agnhost:2.53')).toEqual({});
  });
});

describe('process user', () => {
  const root = { uid: 0, gid: 0 };
  it('is the configured uid and gid (gid 0 when only a user is given) for a root simulator', () => {
    expect(processUser(cfg(as(65534)), root)).toEqual({ uid: 65534, gid: 0 });
    expect(processUser(cfg(as(1001, 2002)), root)).toEqual({ uid: 1001, gid: 2002 });
    expect(processUser(cfg(as(undefined, 2002)), root)).toEqual({ uid: 0, gid: 2002 });
  });
  it("is the simulator's own without a user, with its own user, or when it is not root", () => {
    expect(processUser(cfg(), root)).toBeUndefined();
    expect(processUser(cfg(as()), root)).toBeUndefined();
    expect(processUser(cfg(as(0)), root)).toBeUndefined();
    expect(processUser(cfg(as(0, 0)), root)).toBeUndefined();
    expect(processUser(cfg(as(65534)), { uid: 1000, gid: 1000 })).toBeUndefined();
  });
});

describe.skipIf(process.getuid?.() !== 0)('a container process as another user (simulator as root)', () => {
  let dir: string;
  let sim: RunningSim;
  let rt: RuntimeClient;
  let sandbox: string;
  const sbc = { metadata: { name: 'p', uid: 'u-simuser', namespace: 'default', attempt: 0 } };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-simuser-'));
    sim = await startRuntimeSim(join(dir, 'runtime.sock'));
    rt = new RuntimeClient(`unix://${sim.socket}`);
    sandbox = await rt.runPodSandbox(sbc);
  });
  afterAll(async () => {
    rt.close();
    await sim.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("reports the catalog's user in ImageStatus, none for other images", async () => {
    await rt.pullImage(NONROOT);
    await rt.pullImage(BUSYBOX);
    expect((await rt.imageStatus(NONROOT))?.uid).toEqual({ value: 1234 });
    expect(await rt.imageStatus(BUSYBOX)).toMatchObject({ uid: null, username: '' });
  });

  it('runs the script and exec as the uid and gid, reaching mounts under a 0700 directory', async () => {
    // the agent's layout: a private root dir, an emptyDir (0777) and a read-only file volume (0755, files 0644)
    const root = join(dir, 'root');
    const empty = join(root, 'pods', 'u', 'volumes', 'empty');
    const files = join(root, 'pods', 'u', 'volumes', 'cm');
    await mkdir(empty, { recursive: true });
    await chmod(empty, 0o777);
    await mkdir(files, { recursive: true });
    await writeFile(join(files, 'data'), 'value-1');
    await chmod(root, 0o700);
    const script = 'id -u; id -g; pwd; echo "$HOME"; cat /etc/cm/data; echo; echo written > /mnt/empty/out; sleep 30';
    const id = await rt.createContainer(sandbox, {
      ...cfg(as(65534, 65533)),
      command: ['sh', '-c', script],
      mounts: [{ containerPath: '/mnt/empty', hostPath: empty }, { containerPath: '/etc/cm', hostPath: files, readonly: true }],
    }, sbc);
    await rt.startContainer(id);
    const out = await eventually(async () => (await stat(join(empty, 'out')).catch(() => undefined)) ?? undefined, 'the file the container wrote', { timeoutMs: 10_000, intervalMs: 50 });
    expect([out.uid, out.gid]).toEqual([65534, 65533]);
    expect(await readFile(join(empty, 'out'), 'utf8')).toBe('written\n');
    // the private root dir lets group and others through (g+x, o+x), and no more
    expect((await stat(root)).mode & 0o777).toBe(0o711);
    const exec = await rt.execSync(id, ['sh', '-c', 'id -u; id -g; cat /etc/cm/data'], 5);
    expect([exec.exitCode, exec.stdout.toString(), exec.stderr.toString()]).toEqual([0, '65534\n65533\nvalue-1', '']);
    await rt.stopContainer(id, 0);
    const log: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const s = rt.containerLog({ containerId: id, tailLines: -1 });
      s.on('data', (c: { data: Buffer }) => log.push(c.data.toString()));
      s.on('end', resolve);
      s.on('error', reject);
    });
    expect(log.join('')).toBe('65534\n65533\n/\n/\nvalue-1\n');
  });

  it('lets a user of group 0 through root-owned private directories too (their group bits judge it)', async () => {
    const root = join(dir, 'root0');
    const files = join(root, 'pods', 'u', 'volumes', 'cm');
    await mkdir(files, { recursive: true });
    await writeFile(join(files, 'data'), 'value-0');
    await chmod(root, 0o700);
    const id = await rt.createContainer(sandbox, { ...cfg(as(1000)), command: ['sh', '-c', 'sleep 30'], mounts: [{ containerPath: '/etc/cm', hostPath: files, readonly: true }] }, sbc);
    await rt.startContainer(id);
    const exec = await rt.execSync(id, ['sh', '-c', 'id -u; id -g; cat /etc/cm/data'], 5);
    expect([exec.exitCode, exec.stdout.toString(), exec.stderr.toString()]).toEqual([0, '1000\n0\nvalue-0', '']);
    await rt.stopContainer(id, 0);
  });

  it('runs a container without a user as the simulator, as before', async () => {
    const id = await rt.createContainer(sandbox, { ...cfg(as(0)), command: ['sh', '-c', 'sleep 30'] }, sbc);
    await rt.startContainer(id);
    const exec = await rt.execSync(id, ['sh', '-c', 'id -u; echo "$HOME"'], 5);
    expect(exec.stdout.toString()).toBe(`0\n${process.env.HOME}\n`);
    await rt.stopContainer(id, 0);
  });
});
