// Configuration files and drop-ins (spec 002 §2.4): the four merge rules on real files.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/nodeagent/config/load.js';

let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-cfg-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const HEAD = 'apiVersion: nodeagent.config.orch.io/v1beta1\nkind: NodeAgentConfiguration\n';

async function setup(main: string, dropins: Record<string, string>) {
  const d = join(dir, `case${n++}`);
  await mkdir(join(d, 'conf.d'), { recursive: true });
  await writeFile(join(d, 'main.yaml'), HEAD + main);
  for (const [name, body] of Object.entries(dropins)) await writeFile(join(d, 'conf.d', name), HEAD + body);
  return loadConfig({ configFile: join(d, 'main.yaml'), configDir: join(d, 'conf.d'), domain: 'orch.io' });
}

describe('drop-in merge rules', () => {
  it('scalars and structures: per field, untouched siblings stay', async () => {
    const { config } = await setup('maxPods: 50\nport: 10300\nauthentication:\n  anonymous: {enabled: true}\n  webhook: {enabled: false, cacheTTL: 30s}\n', {
      '10-a.conf': 'maxPods: 60\nauthentication:\n  webhook: {enabled: true}\n',
    });
    expect(config.maxPods).toBe(60);
    expect(config.port).toBe(10300);
    expect(config.authentication.webhook).toEqual({ enabled: true, cacheTTL: 30_000 });
    expect(config.authentication.anonymous.enabled).toBe(true);
  });

  it('lists: the whole list is replaced, in lexical order of the drop-ins', async () => {
    const { config } = await setup('clusterDNS: [10.0.0.10, 10.0.0.11]\n', {
      '20-b.conf': 'clusterDNS: [10.0.0.30]\n',
      '10-a.conf': 'clusterDNS: [10.0.0.20, 10.0.0.21, 10.0.0.22]\n',
      'zz-ignored.yaml': 'clusterDNS: [1.1.1.1]\n',
    });
    expect(config.clusterDNS).toEqual(['10.0.0.30']);
  });

  it('the drop-in directory is walked as kubelet\'s filepath.WalkDir: lexical order, into subdirectories, directories skipped', async () => {
    const d = join(dir, `case${n++}`);
    await mkdir(join(d, 'conf.d', '15-sub', 'deeper'), { recursive: true });
    await mkdir(join(d, 'conf.d', 'x.conf'), { recursive: true }); // a directory named *.conf: skipped, no EISDIR
    await writeFile(join(d, 'main.yaml'), HEAD + 'clusterDNS: [10.0.0.1]\nmaxPods: 10\n');
    await writeFile(join(d, 'conf.d', '10-a.conf'), HEAD + 'clusterDNS: [10.0.0.10]\nmaxPods: 11\n');
    await writeFile(join(d, 'conf.d', '15-sub', 'a.conf'), HEAD + 'clusterDNS: [10.0.0.15]\n');
    await writeFile(join(d, 'conf.d', '15-sub', 'deeper', 'z.conf'), HEAD + 'maxPods: 15\n');
    await writeFile(join(d, 'conf.d', '15-sub', 'skip.yaml'), HEAD + 'maxPods: 99\n');
    await writeFile(join(d, 'conf.d', '20-b.conf'), HEAD + 'clusterDNS: [10.0.0.20]\n');
    const { config } = await loadConfig({ configFile: join(d, 'main.yaml'), configDir: join(d, 'conf.d'), domain: 'orch.io' });
    // 10-a, 15-sub/a, 15-sub/deeper/z, 20-b
    expect(config.clusterDNS).toEqual(['10.0.0.20']);
    expect(config.maxPods).toBe(15);
  });

  it('null in a drop-in removes the key, back to the default (RFC 7386 merge patch, as kubelet)', async () => {
    const { config, fileForm } = await setup('maxPods: 50\nclusterDNS: [10.0.0.10]\nevictionHard: {memory.available: 1Gi, nodefs.available: 5%}\nfeatureGates: {ContainerCheckpoint: false}\nauthentication:\n  webhook: {enabled: false}\n', {
      '10-a.conf': 'maxPods: null\nclusterDNS: null\nevictionHard: {memory.available: null}\nfeatureGates: {ContainerCheckpoint: null}\nauthentication:\n  webhook: null\nnodeLabels: {a: null, b: "1"}\n',
    });
    expect(config.maxPods).toBe(110);
    expect(config.clusterDNS).toEqual([]);
    expect(config.evictionHard).toEqual({ 'memory.available': '100Mi', 'nodefs.available': '5%', 'pid.available': '10%' });
    expect(config.featureGates).toEqual({});
    expect(config.authentication.webhook.enabled).toBe(true);
    expect(config.nodeLabels).toEqual({ b: '1' });
    expect(JSON.stringify(fileForm)).not.toContain('null');
  });

  it('maps with scalar values: per-key override, other keys kept', async () => {
    const { config } = await setup('featureGates: {ContainerCheckpoint: false, SystemdWatchdog: true}\nnodeLabels: {a: "1", b: "2"}\n', {
      '10-a.conf': 'featureGates: {ContainerCheckpoint: true, InPlacePodVerticalScaling: false}\nnodeLabels: {b: "3"}\n',
    });
    expect(config.featureGates).toEqual({ ContainerCheckpoint: true, SystemdWatchdog: true, InPlacePodVerticalScaling: false });
    expect(config.nodeLabels).toEqual({ a: '1', b: '3' });
  });

  it('maps of string lists: a key present in the drop-in has its list replaced whole, others kept', async () => {
    const { config } = await setup('staticPodURLHeader:\n  Authorization: [a, b]\n  X-Keep: [k]\n', {
      '10-a.conf': 'staticPodURLHeader:\n  Authorization: [c]\n  X-New: [n1, n2]\n',
    });
    expect(config.staticPodURLHeader).toEqual({ Authorization: ['c'], 'X-Keep': ['k'], 'X-New': ['n1', 'n2'] });
  });

  it('fills defaults for what no file sets', async () => {
    const { config } = await setup('', {});
    expect(config.nodeLeaseRenewInterval).toBe(10_000);
    expect(config.nodeStatusReportFrequency).toBe(300_000);
    expect(config.staticPodPath).toBe('/etc/orch/manifests');
  });
});

describe('bad configuration', () => {
  it('an unknown field names the file and the field', async () => {
    await expect(setup('', { '10-a.conf': 'authentication:\n  x509: {clientCAfile: /x}\n' })).rejects.toThrow(/10-a\.conf: unknown field "authentication\.x509\.clientCAfile"/);
    await expect(setup('nodeLeaseRenew: 5s\n', {})).rejects.toThrow(/main\.yaml: unknown field "nodeLeaseRenew"/);
  });
  it('a wrong type names the file and the field', async () => {
    await expect(setup('maxPods: "ten"\n', {})).rejects.toThrow(/main\.yaml: field "maxPods" must be an integer/);
    await expect(setup('', { '10-a.conf': 'nodeLeaseRenewInterval: soon\n' })).rejects.toThrow(/10-a\.conf: field "nodeLeaseRenewInterval" must be a duration/);
    await expect(setup('featureGates: {X: "yes"}\n', {})).rejects.toThrow(/field "featureGates\.X" must be a boolean/);
    await expect(setup('clusterDNS: 10.0.0.1\n', {})).rejects.toThrow(/field "clusterDNS" must be a list/);
    await expect(setup('featureGates: {NoSuchGate: true}\n', {})).rejects.toThrow(/unknown feature gate\(s\) NoSuchGate/);
  });
  it('a wrong apiVersion or kind is refused', async () => {
    const d = join(dir, 'bad');
    await mkdir(d, { recursive: true });
    await writeFile(join(d, 'c.yaml'), 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n');
    await expect(loadConfig({ configFile: join(d, 'c.yaml'), domain: 'orch.io' })).rejects.toThrow(/c\.yaml: field "apiVersion" must be nodeagent\.config\.orch\.io\/v1beta1/);
    await writeFile(join(d, 'y.yaml'), 'a: [\n');
    await expect(loadConfig({ configFile: join(d, 'y.yaml'), domain: 'orch.io' })).rejects.toThrow(/y\.yaml: not valid YAML/);
  });
});

describe('crashLoopBackOff (kube 1.32, feature gate KubeletCrashLoopBackOffMax)', () => {
  it('caps the back-off at maxContainerRestartPeriod when the gate is on; 300 s when unset', async () => {
    expect((await setup('', {})).config.crashLoopBackOff).toEqual({ maxContainerRestartPeriod: 300_000 });
    const { config } = await setup('featureGates: {KubeletCrashLoopBackOffMax: true}\ncrashLoopBackOff: {maxContainerRestartPeriod: 2s}\n', {});
    expect(config.crashLoopBackOff).toEqual({ maxContainerRestartPeriod: 2_000 });
  });

  it('refuses the field without the gate, and outside 1s–300s, with kubelet\'s messages', async () => {
    await expect(setup('crashLoopBackOff: {maxContainerRestartPeriod: 30s}\n', {})).rejects.toThrow(
      'invalid configuration: FeatureGate KubeletCrashLoopBackOffMax not enabled, CrashLoopBackOff.MaxContainerRestartPeriod must not be set',
    );
    const gated = 'featureGates: {KubeletCrashLoopBackOffMax: true}\n';
    await expect(setup(`${gated}crashLoopBackOff: {maxContainerRestartPeriod: 500ms}\n`, {})).rejects.toThrow(
      'invalid configuration: CrashLoopBackOff.MaxContainerRestartPeriod (got: 0.5 seconds) must be set between 1s and 300s',
    );
    await expect(setup(`${gated}crashLoopBackOff: {maxContainerRestartPeriod: 6m}\n`, {})).rejects.toThrow('(got: 360 seconds) must be set between 1s and 300s');
    await expect(setup(`${gated}crashLoopBackOff: {maxContainerRestartPeriod: soon}\n`, {})).rejects.toThrow('crashLoopBackOff.maxContainerRestartPeriod');
  });
});

describe('allowedUnsafeSysctls (kubelet 1.32)', () => {
  it('is a list replaced whole by a drop-in, empty by default', async () => {
    expect((await setup('', {})).config.allowedUnsafeSysctls).toEqual([]);
    const { config } = await setup("allowedUnsafeSysctls: ['kernel.msg*', net.core.somaxconn]\n", { '10-a.conf': "allowedUnsafeSysctls: ['kernel.shm*', 'net/ipv4/*']\n" });
    expect(config.allowedUnsafeSysctls).toEqual(['kernel.shm*', 'net/ipv4/*']);
  });

  it("refuses a malformed entry and one not known to be namespaced, with kubelet's messages", async () => {
    await expect(setup("allowedUnsafeSysctls: ['foo-']\n", {})).rejects.toThrow(
      'field "allowedUnsafeSysctls": sysctl "foo-" must have at most 253 characters and match regex ([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]',
    );
    await expect(setup("allowedUnsafeSysctls: ['vm.swappiness']\n", {})).rejects.toThrow('field "allowedUnsafeSysctls": the sysctls "vm.swappiness" are not known to be namespaced');
    await expect(setup("allowedUnsafeSysctls: ['kernel.*']\n", {})).rejects.toThrow('the sysctls "kernel." are not known to be namespaced');
    await expect(setup('allowedUnsafeSysctls: kernel.msgmax\n', {})).rejects.toThrow('field "allowedUnsafeSysctls" must be a list');
  });
});

describe('start-up validation (kubelet\'s ValidateKubeletConfiguration, ParseResourceList)', () => {
  it('refuses a taint with an invalid effect or key, or with timeAdded set ("invalid taint")', async () => {
    await expect(setup('registerWithTaints: [{key: a, effect: NoWay}]\n', {})).rejects.toThrow(/field "registerWithTaints\[0\]": invalid taint: .*invalid taint effect: NoWay/);
    await expect(setup('registerWithTaints: [{key: "bad key!", effect: NoSchedule}]\n', {})).rejects.toThrow(/registerWithTaints\[0\]": invalid taint: .*invalid taint key/);
    await expect(setup('registerWithTaints: [{key: example.com/k, effect: NoExecute, timeAdded: "2026-01-01T00:00:00Z"}]\n', {})).rejects.toThrow(/invalid taint: .*taint.TimeAdded is not nil/);
    const ok = await setup('registerWithTaints: [{key: example.com/k, value: v1, effect: NoExecute}, {key: dedicated}]\n', {});
    expect(ok.config.registerWithTaints).toHaveLength(2);
  });

  it('refuses reservations of other resources and values that are no quantity ("cannot reserve")', async () => {
    await expect(setup('systemReserved: {gpu: "1"}\n', {})).rejects.toThrow('field "systemReserved": cannot reserve "gpu" resource');
    await expect(setup('kubeReserved: {memory: lots}\n', {})).rejects.toThrow('field "kubeReserved.memory": "lots" is not a quantity');
    await expect(setup('kubeReserved: {cpu: "-1"}\n', {})).rejects.toThrow('resource quantity for "cpu" cannot be negative');
    const ok = await setup('systemReserved: {cpu: 500m, memory: 1Gi, ephemeral-storage: 1Gi, pid: "100"}\nkubeReserved: {memory: 256Mi}\n', {});
    expect(ok.config.kubeReserved).toEqual({ memory: '256Mi' });
  });

  it('refuses a port outside 1–65535 (0 picks a free one)', async () => {
    await expect(setup('port: 99999\n', {})).rejects.toThrow('field "port": port (--port) 99999 must be between 1 and 65535, inclusive');
    expect((await setup('port: 0\n', {})).config.port).toBe(0);
  });
});
