// The sig-storage volume e2e conformance tests (test/e2e/common/storage/
// downwardapi_volume.go, configmap_volume.go, secrets_volume.go and their
// projected_*.go twins) as suites a test file registers, for plain volumes or
// for the same source inside a projected volume: kube's projected tests are
// the plain ones with the source wrapped, their own names and mount paths.
// kube's pods read the files with agnhost mounttest; here a shell script the
// simulator runs for real prints mounttest's lines (e2e-node-mounttest.ts),
// and the container's log, read through the API, is what kube's
// TestContainerOutput checks.

import { describe, expect, it } from 'vitest';
import { type E2eEnv, type Obj, namespace } from './e2e-apps.js';
import { fileMode, mounttest, mounttestLoop } from './e2e-node-mounttest.js';
import { BUSYBOX, PODS, podLog, testContainerOutput, uniqueName } from './e2e-node-output.js';

const AGNHOST = 'registry.k8s.io/e2e-test-images/agnhost:2.53';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const DATA = { 'data-1': 'value-1', 'data-2': 'value-2', 'data-3': 'value-3' };
/** kube runs these pods as uid 1000 (group 0); so does the simulator when it runs as root (docs/nodeagent.md "What the simulator runs") */
const NON_ROOT = { securityContext: { runAsUser: 1000 } };

function pod(prefix: string, volumes: Obj[], containers: Obj[], extra: Obj = {}): Obj {
  const name = uniqueName(prefix);
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, ...(extra.metadata ?? {}) }, spec: { volumes, containers, restartPolicy: 'Never', ...(extra.spec ?? {}) } };
}
const container = (name: string, command: string[], mounts: Obj[], more: Obj = {}): Obj => ({ name, image: AGNHOST, command, volumeMounts: mounts, ...more });

/** a suite's file: its env, its node, and whether the sources go inside a projected volume */
export interface Suite {
  env: E2eEnv;
  node: string;
  projected: boolean;
}

/** the volume `name` with one source of `kind`: itself, or the one source of a projected volume (defaultMode on the volume) */
function volume(s: Suite, name: string, kind: 'configMap' | 'secret' | 'downwardAPI', source: Obj, defaultMode?: number): Obj {
  const mode = defaultMode ? { defaultMode } : {};
  if (s.projected) return { name, projected: { sources: [{ [kind]: source }], ...mode } };
  // a plain secret volume names its Secret `secretName`
  const plain = kind === 'secret' ? { secretName: source.name, ...Object.fromEntries(Object.entries(source).filter(([k]) => k !== 'name')) } : source;
  return { name, [kind]: { ...plain, ...mode } };
}

/** the e2e framework's calls, on the suite's env */
function calls(s: Suite) {
  const { env } = s;
  return {
    env,
    /** a namespace of its own per test */
    ns: (base: string) => namespace(env, `${base}-${Math.random().toString(36).slice(2, 8)}`),
    /** a log poll (e2epod.GetPodLogs under gomega.Eventually) until it holds `text` */
    logHas: (n: string, p: string, c: string, text: string, ms = 150_000) =>
      env.eventually(async () => (await podLog(env, n, p, c)).includes(text), `${p}/${c} logs ${JSON.stringify(text)}`, ms),
    /** podClient.CreateSync: created and Running */
    async createRunning(n: string, p: Obj): Promise<void> {
      await env.call('POST', PODS(n), p);
      await env.eventually(async () => (await env.get(`${PODS(n)}/${p.metadata.name}`)).status?.phase === 'Running', `${p.metadata.name} Running`);
    },
  };
}

/** downwardapi_volume.go, projected_downwardapi.go */
export function downwardApiVolumeSuite(s: Suite): void {
  describe(s.projected ? '[sig-storage] Projected downwardAPI' : '[sig-storage] Downward API volume', () => downwardApi(s));
}

function downwardApi(s: Suite): void {
  const { env, ns, logHas, createRunning } = calls(s);
  const FILES: Obj[] = [
    { path: 'podname', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } },
    ...[['cpu_limit', 'limits.cpu'], ['cpu_request', 'requests.cpu'], ['memory_limit', 'limits.memory'], ['memory_request', 'requests.memory']].map(([path, resource]) => ({
      path, resourceFieldRef: { containerName: 'client-container', resource },
    })),
  ];
  const RESOURCES = { requests: { cpu: '250m', memory: '32Mi' }, limits: { cpu: '1250m', memory: '64Mi' } };
  /** kube's downwardAPIVolumeBasePod with one container */
  function dapiPod(command: string[], o: { items?: Obj[]; defaultMode?: number; resources?: Obj; labels?: Obj; annotations?: Obj } = {}): Obj {
    const vol = volume(s, 'podinfo', 'downwardAPI', { items: o.items ?? FILES }, o.defaultMode);
    const c = container('client-container', command, [{ name: 'podinfo', mountPath: '/etc/podinfo' }], o.resources ? { resources: o.resources } : {});
    return pod('downwardapi-volume-', [vol], [c], { metadata: { labels: o.labels, annotations: o.annotations } });
  }
  const withMode = (mode: number) => [{ ...FILES[0], mode }, ...FILES.slice(1)];

  it('should provide podname only [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    const p = dapiPod(mounttest({ content: ['/etc/podinfo/podname'] }));
    await testContainerOutput(env, n, p, 0, [`${p.metadata.name}\n`]);
  });

  it('should set DefaultMode on files [LinuxOnly] [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    await testContainerOutput(env, n, dapiPod(mounttest({ mode: ['/etc/podinfo/podname'] }), { defaultMode: 0o400 }), 0, ['mode of file "/etc/podinfo/podname": -r--------']);
  });

  it('should set mode on item file [LinuxOnly] [NodeConformance] [Conformance]', async () => {
    const n = await ns('downward-api');
    await testContainerOutput(env, n, dapiPod(mounttest({ mode: ['/etc/podinfo/podname'] }), { items: withMode(0o400) }), 0, ['mode of file "/etc/podinfo/podname": -r--------']);
  });

  for (const [what, file, value] of [["cpu limit", 'cpu_limit', '2'], ['memory limit', 'memory_limit', '67108864'], ['cpu request', 'cpu_request', '1'], ['memory request', 'memory_request', '33554432']]) {
    it(`should provide container's ${what} [NodeConformance] [Conformance]`, async () => {
      const n = await ns('downward-api');
      await testContainerOutput(env, n, dapiPod(mounttest({ content: [`/etc/podinfo/${file}`] }), { resources: RESOURCES }), 0, [`${value}\n`]);
    });
  }

  for (const [what, file] of [['cpu', 'cpu_limit'], ['memory', 'memory_limit']]) {
    it(`should provide node allocatable (${what}) as default ${what} limit if the limit is not set [NodeConformance] [Conformance]`, async () => {
      const n = await ns('downward-api');
      const log = await testContainerOutput(env, n, dapiPod(mounttest({ content: [`/etc/podinfo/${file}`] })), 0, [/[1-9]/]);
      // beyond kube's check: the file holds the node's allocatable (cpu in whole cores, rounded up)
      const alloc = (await env.get(`/api/v1/nodes/${s.node}`)).status.allocatable;
      const want = what === 'cpu' ? String(Math.ceil(Number(alloc.cpu))) : /^\d{7,}$/;
      const got = log.trim().replace(/^content of file "[^"]*": /, '');
      if (typeof want === 'string') expect(got).toBe(want);
      else expect(got).toMatch(want);
    });
  }

  for (const [what, file, before, change, after] of [
    ['labels', 'labels', 'key1="value1"\n', (p: Obj) => void (p.metadata.labels.key3 = 'value3'), 'key3="value3"\n'],
    ['annotations', 'annotations', 'builder="bar"\n', (p: Obj) => void (p.metadata.annotations.builder = 'foo'), 'builder="foo"\n'],
  ] as const) {
    it(`should update ${what} on modification [NodeConformance] [Conformance]`, async () => {
      const n = await ns('downward-api');
      const meta = what === 'labels' ? { labels: { key1: 'value1', key2: 'value2' } } : { annotations: { builder: 'bar' } };
      const items = [...FILES, { path: file, fieldRef: { apiVersion: 'v1', fieldPath: `metadata.${what}` } }];
      const p = dapiPod(mounttestLoop(`/etc/podinfo/${file}`), { items, ...meta });
      await createRunning(n, p);
      await logHas(n, p.metadata.name, 'client-container', before);
      // podClient.Update: get, change, put (again on a conflict)
      await env.eventually(async () => {
        const cur = await env.get(`${PODS(n)}/${p.metadata.name}`);
        change(cur);
        const r = await env.ts().request('PUT', `${PODS(n)}/${p.metadata.name}`, { body: cur });
        return r.status === 200;
      }, 'the pod update');
      // kubelet rewrites the file at the updated pod's next sync (test/nodeagent/volume-manager.test.ts checks the agent does)
      await logHas(n, p.metadata.name, 'client-container', after);
    });
  }
}

/** configmap_volume.go, projected_configmap.go */
export function configMapVolumeSuite(s: Suite): void {
  describe(s.projected ? '[sig-storage] Projected configMap' : '[sig-storage] ConfigMap', () => configMapVolume(s));
}

function configMapVolume(s: Suite): void {
  const { env, ns, logHas, createRunning } = calls(s);
  const MOUNT = s.projected ? '/etc/projected-configmap-volume' : '/etc/configmap-volume';
  const VOLUME = s.projected ? 'projected-configmap-volume' : 'configmap-volume';
  async function configMap(n: string, data: Obj = DATA, binaryData?: Obj): Promise<string> {
    const name = uniqueName('configmap-test-volume-');
    await env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { metadata: { name }, data, ...(binaryData ? { binaryData } : {}) });
    return name;
  }
  /** kube's doConfigMapE2EWithoutMappings / WithMappings */
  async function consume(o: { mappings: boolean; mode?: number; nonRoot?: boolean }) {
    const n = await ns('configmap');
    const name = await configMap(n);
    const file = o.mappings ? `${MOUNT}/path/to/data-2` : `${MOUNT}/data-1`;
    const items = o.mappings ? { items: [{ key: 'data-2', path: 'path/to/data-2', ...(o.mode ? { mode: o.mode } : {}) }] } : {};
    const vol = volume(s, VOLUME, 'configMap', { name, ...items }, o.mappings ? undefined : o.mode);
    const p = pod('pod-configmaps-', [vol], [container('agnhost-container', mounttest({ content: [file], mode: [file] }), [{ name: VOLUME, mountPath: MOUNT }])], o.nonRoot ? { spec: NON_ROOT } : {});
    await testContainerOutput(env, n, p, 0, [`content of file "${file}": ${o.mappings ? 'value-2' : 'value-1'}`, fileMode(file, o.mode)]);
  }

  it('should be consumable from pods in volume [NodeConformance] [Conformance]', () => consume({ mappings: false }));
  it('should be consumable from pods in volume with defaultMode set [LinuxOnly] [NodeConformance] [Conformance]', () => consume({ mappings: false, mode: 0o400 }));
  it('should be consumable from pods in volume as non-root [NodeConformance] [Conformance]', () => consume({ mappings: false, nonRoot: true }));
  it('should be consumable from pods in volume with mappings [NodeConformance] [Conformance]', () => consume({ mappings: true }));
  it('should be consumable from pods in volume with mappings and Item mode set [LinuxOnly] [NodeConformance] [Conformance]', () => consume({ mappings: true, mode: 0o400 }));
  it('should be consumable from pods in volume with mappings as non-root [NodeConformance] [Conformance]', () => consume({ mappings: true, nonRoot: true }));

  it('should be consumable in multiple volumes in the same pod [NodeConformance] [Conformance]', async () => {
    const n = await ns('configmap');
    const name = await configMap(n);
    const p = pod('pod-configmaps-', [volume(s, VOLUME, 'configMap', { name }), volume(s, `${VOLUME}-2`, 'configMap', { name })], [
      container('agnhost-container', mounttest({ content: [`${MOUNT}/data-1`] }), [
        { name: VOLUME, mountPath: MOUNT, readOnly: true },
        { name: `${VOLUME}-2`, mountPath: `${MOUNT}-2`, readOnly: true },
      ]),
    ]);
    await testContainerOutput(env, n, p, 0, [`content of file "${MOUNT}/data-1": value-1`]);
  });

  // configmap_volume.go only (projected_configmap.go has no binary data test)
  it.skipIf(s.projected)('binary data should be reflected in volume [NodeConformance] [Conformance]', async () => {
    const n = await ns('configmap');
    const name = await configMap(n, { 'data-1': 'value-1' }, { 'dump.bin': Buffer.from([0xde, 0xca, 0xfe, 0xba, 0xd0, 0xfe, 0xff]).toString('base64') });
    const mount = [{ name: VOLUME, mountPath: MOUNT, readOnly: true }];
    const p = pod('pod-configmaps-', [volume(s, VOLUME, 'configMap', { name })], [
      container('agnhost-container', mounttestLoop(`${MOUNT}/data-1`), mount),
      { name: 'configmap-volume-binary-test', image: BUSYBOX, command: ['hexdump', '-C', `${MOUNT}/dump.bin`], volumeMounts: mount },
    ]);
    await env.call('POST', PODS(n), p);
    await logHas(n, p.metadata.name, 'agnhost-container', 'value-1');
    await logHas(n, p.metadata.name, 'configmap-volume-binary-test', 'de ca fe ba d0 fe ff');
  });

  it('updates should be reflected in volume [NodeConformance] [Conformance]', async () => {
    const n = await ns('configmap');
    const name = await configMap(n, { 'data-1': 'value-1' });
    const p = pod('pod-configmaps-', [volume(s, VOLUME, 'configMap', { name })], [container('agnhost-container', mounttestLoop(`${MOUNT}/data-1`), [{ name: VOLUME, mountPath: MOUNT }])]);
    await createRunning(n, p);
    await logHas(n, p.metadata.name, 'agnhost-container', 'value-1');
    await env.call('PUT', `/api/v1/namespaces/${n}/configmaps/${name}`, { metadata: { name }, data: { 'data-1': 'value-2' } });
    // kubelet rewrites configMap volumes at its periodic pod sync (syncFrequency, a minute; the suites' agents 2 s); so does the agent
    await logHas(n, p.metadata.name, 'agnhost-container', 'value-2');
  }, 180_000);
}

/** secrets_volume.go, projected_secret.go */
export function secretVolumeSuite(s: Suite): void {
  describe(s.projected ? '[sig-storage] Projected secret' : '[sig-storage] Secrets', () => secretVolume(s));
}

function secretVolume(s: Suite): void {
  const { env, ns, logHas, createRunning } = calls(s);
  const MOUNT = s.projected ? '/etc/projected-secret-volume' : '/etc/secret-volume';
  const VOLUME = s.projected ? 'projected-secret-volume' : 'secret-volume';
  async function secret(n: string, name = uniqueName('secret-test-'), data: Obj = DATA): Promise<string> {
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(`${v}\n`)])) });
    return name;
  }
  /** kube's doSecretE2EWithoutMapping / WithMapping */
  async function consume(o: { mappings: boolean; mode?: number; name?: string; n?: string; nonRoot?: boolean }) {
    const n = o.n ?? (await ns('secrets'));
    const name = await secret(n, o.name);
    const file = o.mappings ? `${MOUNT}/new-path-data-1` : `${MOUNT}/data-1`;
    const items = o.mappings ? { items: [{ key: 'data-1', path: 'new-path-data-1', ...(o.mode ? { mode: o.mode } : {}) }] } : {};
    const vol = volume(s, VOLUME, 'secret', { name, ...items }, o.mappings ? undefined : o.mode);
    const p = pod('pod-secrets-', [vol], [container('secret-volume-test', mounttest({ content: [file], mode: [file] }), [{ name: VOLUME, mountPath: MOUNT, readOnly: true }])], o.nonRoot ? { spec: NON_ROOT } : {});
    await testContainerOutput(env, n, p, 0, [`content of file "${file}": value-1`, fileMode(file, o.mode)]);
  }

  it('should be consumable from pods in volume [NodeConformance] [Conformance]', () => consume({ mappings: false }));
  it('should be consumable from pods in volume with defaultMode set [LinuxOnly] [NodeConformance] [Conformance]', () => consume({ mappings: false, mode: 0o400 }));
  // kube also sets fsGroup 1001: ownership changes are not built; the mode is the defaultMode's either way, and
  // the file (root:root 0440) is read through the process's group 0, where kube's is read through group 1001
  it('should be consumable from pods in volume as non-root with defaultMode and fsGroup set [LinuxOnly] [NodeConformance] [Conformance]', () => consume({ mappings: false, mode: 0o440, nonRoot: true }));
  it('should be consumable from pods in volume with mappings [NodeConformance] [Conformance]', () => consume({ mappings: true }));
  it('should be consumable from pods in volume with mappings and Item Mode set [LinuxOnly] [NodeConformance] [Conformance]', () => consume({ mappings: true, mode: 0o400 }));

  it('should be able to mount in a volume regardless of a different secret existing with same name in different namespace [NodeConformance] [Conformance]', async () => {
    const other = await ns('secret-namespace');
    const name = await secret(other, undefined, { this_should_not_match_content_of_other_secret: 'similarly_this_should_not_match_content_of_other_secret' });
    await consume({ mappings: false, name });
  });

  it('should be consumable in multiple volumes in a pod [NodeConformance] [Conformance]', async () => {
    const n = await ns('secrets');
    const name = await secret(n);
    const p = pod('pod-secrets-', [volume(s, VOLUME, 'secret', { name }), volume(s, `${VOLUME}-2`, 'secret', { name })], [
      container('secret-volume-test', mounttest({ content: [`${MOUNT}/data-1`], mode: [`${MOUNT}/data-1`] }), [
        { name: VOLUME, mountPath: MOUNT, readOnly: true },
        { name: `${VOLUME}-2`, mountPath: `${MOUNT}-2`, readOnly: true },
      ]),
    ]);
    await testContainerOutput(env, n, p, 0, [`content of file "${MOUNT}/data-1": value-1`, fileMode(`${MOUNT}/data-1`)]);
  });

  it('optional updates should be reflected in volume [NodeConformance] [Conformance]', async () => {
    const n = await ns('secrets');
    const [del, upd, create] = ['s-test-opt-del-', 's-test-opt-upd-', 's-test-opt-create-'].map(uniqueName) as [string, string, string];
    const one = { 'data-1': b64('value-1') };
    for (const secretName of [del, upd]) await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { metadata: { name: secretName }, data: one });
    const base = `${MOUNT}s`;
    const vols = [['deletes-volume', del], ['updates-volume', upd], ['creates-volume', create]].map(([v, name]) => volume(s, v!, 'secret', { name, optional: true }));
    const watched = [['dels-volume-test', 'deletes-volume', 'delete', 'data-1'], ['upds-volume-test', 'updates-volume', 'update', 'data-3'], ['creates-volume-test', 'creates-volume', 'create', 'data-1']];
    const p = pod('pod-secrets-', vols, watched.map(([c, v, dir, f]) => container(c!, mounttestLoop(`${base}/${dir}/${f}`), [{ name: v, mountPath: `${base}/${dir}`, readOnly: true }])));
    await createRunning(n, p);
    const name = p.metadata.name as string;
    await logHas(n, name, 'creates-volume-test', `Error reading file ${base}/create/data-1`);
    await logHas(n, name, 'upds-volume-test', `Error reading file ${base}/update/data-3`);
    await logHas(n, name, 'dels-volume-test', 'value-1');

    await env.call('DELETE', `/api/v1/namespaces/${n}/secrets/${del}`);
    await env.call('PUT', `/api/v1/namespaces/${n}/secrets/${upd}`, { metadata: { name: upd }, data: { 'data-3': b64('value-3') } });
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { metadata: { name: create }, data: one });
    // the periodic pod sync (syncFrequency) brings all three changes, as kubelet's does
    await logHas(n, name, 'creates-volume-test', 'value-1');
    await logHas(n, name, 'upds-volume-test', 'value-3');
    await logHas(n, name, 'dels-volume-test', `Error reading file ${base}/delete/data-1`);
  }, 200_000);
}
