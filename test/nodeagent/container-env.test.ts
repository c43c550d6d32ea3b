// The container environment as kubelet 1.32 builds it (src/nodeagent/container-env.ts):
// each source, `$(VAR)` expansion (with `$$` and unknown names), ordering,
// optional references, resource divisors, service variables, and the
// CreateContainerConfigError messages of missing references.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { containerEnv, type EnvContainer, EnvError, type EnvInputs, type EnvPod, type Fetched, refs, serviceEnv } from '../../src/nodeagent/container-env.js';
import { expand, mappingFor } from '../../src/nodeagent/expansion.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const pod: EnvPod = {
  metadata: { name: 'p', namespace: 'ns1', uid: 'u-1', labels: { app: 'web' }, annotations: { 'batch.kubernetes.io/job-completion-index': '3' } },
  spec: { nodeName: 'node-1', serviceAccountName: 'sa', containers: [] },
};
function run(c: EnvContainer, over: Partial<EnvInputs> = {}): ReturnType<typeof containerEnv> {
  return containerEnv({ pod, container: c, podIPs: ['10.88.0.5'], hostIPs: ['192.168.1.2'], allocatable: { cpu: '3500m', memory: '8Gi', 'ephemeral-storage': '100Gi' }, services: [], configMaps: new Map(), secrets: new Map(), ...over });
}
const envOf = (r: ReturnType<typeof containerEnv>) => Object.fromEntries(r.env.map((e) => [e.key, e.value]));
const val = (c: EnvContainer, name: string, over: Partial<EnvInputs> = {}) => envOf(run(c, over))[name];

describe('expansion', () => {
  const m = mappingFor(new Map([['A', 'x'], ['B', 'y']]));
  it.each([
    ['$(A)', 'x'],
    ['pre-$(A)-$(B)-post', 'pre-x-y-post'],
    ['$$(A)', '$(A)'],
    ['$$$(A)', '$x'],
    ['$(UNKNOWN)', '$(UNKNOWN)'],
    ['$(A', '$(A'],
    ['$A', '$A'],
    ['a$', 'a$'],
    ['$()', '$()'],
    ['$(A)$(B)', 'xy'],
  ])('%s → %s', (input, out) => expect(expand(input, m)).toBe(out));

  // reference model: a left-to-right regex scan of the three token kinds
  const model = (s: string, vars: Map<string, string>) =>
    s.replace(/\$\$|\$\(([^)]*)\)/g, (tok, name: string | undefined) => (tok === '$$' ? '$' : (vars.get(name!) ?? tok)));
  it('matches a reference model on random strings', () => {
    const alphabet = fc.constantFrom('$', '(', ')', 'A', 'B', 'x', '-');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 24 }).map((a) => a.join('')), (s) => {
        const vars = new Map([['A', 'va'], ['B', '$(A)']]);
        expect(expand(s, mappingFor(vars))).toBe(model(s, vars));
      }),
    );
  });
});

describe('env values', () => {
  it('expands against earlier variables only, and service variables; order is kept', () => {
    const r = run({ name: 'c', env: [{ name: 'A', value: 'a' }, { name: 'B', value: '$(A)-$(C)' }, { name: 'C', value: 'c' }, { name: 'D', value: '$(X_SERVICE_HOST)' }] }, { services: [{ metadata: { name: 'x', namespace: 'ns1' }, spec: { clusterIP: '10.0.0.9', ports: [{ port: 80 }] } }] });
    expect(envOf(r)).toMatchObject({ A: 'a', B: 'a-$(C)', C: 'c', D: '10.0.0.9' });
    expect(r.env.slice(0, 4).map((e) => e.key)).toEqual(['A', 'B', 'C', 'D']);
  });
  it('a later entry with the same name wins; a literal value is not re-expanded from valueFrom', () => {
    expect(val({ name: 'c', env: [{ name: 'A', value: '1' }, { name: 'A', value: '2' }] }, 'A')).toBe('2');
    expect(val({ name: 'c', env: [{ name: 'E', value: '' }] }, 'E')).toBe('');
  });
  it('command and args expand against the final environment', () => {
    const r = run({ name: 'c', command: ['echo', '$(A)', '$$(A)'], args: ['$(B)', '$(NOPE)'], env: [{ name: 'A', value: 'a' }, { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] });
    expect(r.command).toEqual(['echo', 'a', '$(A)']);
    expect(r.args).toEqual(['p', '$(NOPE)']);
  });
});

describe('fieldRef', () => {
  it.each([
    ['metadata.name', 'p'],
    ['metadata.namespace', 'ns1'],
    ['metadata.uid', 'u-1'],
    ["metadata.labels['app']", 'web'],
    ["metadata.labels['missing']", ''],
    ["metadata.annotations['batch.kubernetes.io/job-completion-index']", '3'],
    ["metadata.annotations['nope']", ''],
    ['spec.nodeName', 'node-1'],
    ['spec.serviceAccountName', 'sa'],
    ['status.hostIP', '192.168.1.2'],
    ['status.hostIPs', '192.168.1.2'],
    ['status.podIP', '10.88.0.5'],
    ['status.podIPs', '10.88.0.5'],
  ])('%s → %s', (fieldPath, out) => expect(val({ name: 'c', env: [{ name: 'V', valueFrom: { fieldRef: { fieldPath } } }] }, 'V')).toBe(out));
  it('an unsupported path fails the container', () => {
    expect(() => run({ name: 'c', env: [{ name: 'V', valueFrom: { fieldRef: { fieldPath: 'spec.hostname' } } }] })).toThrow('unsupported fieldPath: spec.hostname');
  });
});

describe('resourceFieldRef', () => {
  const c: EnvContainer = { name: 'c', resources: { limits: { cpu: '1250m', memory: '1Gi' }, requests: { cpu: '250m' } } };
  const res = (resource: string, divisor?: string, containerName?: string, over: EnvContainer = c) => val({ ...over, env: [{ name: 'V', valueFrom: { resourceFieldRef: { resource, divisor, containerName } } }] }, 'V');
  it('cpu rounds up to whole divisor units', () => {
    expect(res('limits.cpu')).toBe('2');
    expect(res('limits.cpu', '1m')).toBe('1250');
    expect(res('limits.cpu', '500m')).toBe('3');
    expect(res('requests.cpu', '1m')).toBe('250');
    expect(res('requests.cpu')).toBe('1');
  });
  it('memory in bytes or divisor units, rounded up', () => {
    expect(res('limits.memory')).toBe(String(1024 ** 3));
    expect(res('limits.memory', '1Mi')).toBe('1024');
    expect(res('limits.memory', '1G')).toBe('2');
  });
  it('a missing limit is the node allocatable; a missing request is the limit, else 0', () => {
    expect(res('limits.ephemeral-storage', '1Gi')).toBe('100');
    expect(res('limits.cpu', '1m', undefined, { name: 'c' })).toBe('3500');
    expect(res('requests.memory', '1Mi')).toBe('1024');
    expect(res('requests.memory', undefined, undefined, { name: 'c' })).toBe('0');
  });
  it('containerName reads another container of the pod', () => {
    const p: EnvPod = { ...pod, spec: { containers: [{ name: 'other', resources: { limits: { memory: '64Mi' } } }] } };
    expect(val({ name: 'c', env: [{ name: 'V', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi', containerName: 'other' } } }] }, 'V', { pod: p })).toBe('64');
    expect(() => run({ name: 'c', env: [{ name: 'V', valueFrom: { resourceFieldRef: { resource: 'limits.memory', containerName: 'ghost' } } }] })).toThrow('container ghost not found');
  });
});

describe('ConfigMaps and Secrets', () => {
  const configMaps = new Map<string, Fetched>([['cfg', { data: { color: 'blue', 'bad key': 'x', '1st': 'y', 'dotted.name': 'z' } }], ['gone', { notFound: true }]]);
  const secrets = new Map<string, Fetched>([['sec', { data: { password: b64('s3cr3t'), user: b64('admin') } }]]);
  const io = { configMaps, secrets };
  it('keyRefs read the value (Secrets decoded)', () => {
    const e = envOf(run({ name: 'c', env: [{ name: 'C', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } }, { name: 'S', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } }] }, io));
    expect(e).toMatchObject({ C: 'blue', S: 's3cr3t' });
  });
  it('a missing non-optional reference is kubelet error; an optional one is skipped', () => {
    const one = (v: NonNullable<EnvContainer['env']>[number]['valueFrom']) => () => run({ name: 'c', env: [{ name: 'V', valueFrom: v }] }, io);
    expect(one({ configMapKeyRef: { name: 'gone', key: 'k' } })).toThrow(new EnvError('configmap "gone" not found'));
    expect(one({ secretKeyRef: { name: 'nosuch', key: 'k' } })).toThrow(new EnvError('secret "nosuch" not found'));
    expect(one({ configMapKeyRef: { name: 'cfg', key: 'k' } })).toThrow(new EnvError("couldn't find key k in ConfigMap ns1/cfg"));
    expect(one({ secretKeyRef: { name: 'sec', key: 'k' } })).toThrow(new EnvError("couldn't find key k in Secret ns1/sec"));
    const r = run({ name: 'c', env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'gone', key: 'k', optional: true } } }, { name: 'B', valueFrom: { secretKeyRef: { name: 'sec', key: 'k', optional: true } } }] }, io);
    expect(envOf(r)).not.toHaveProperty('A');
    expect(envOf(r)).not.toHaveProperty('B');
  });
  it('a read error is the container error', () => {
    expect(() => run({ name: 'c', envFrom: [{ configMapRef: { name: 'x' } }] }, { configMaps: new Map([['x', { error: 'GET x: 503 unavailable' }]]) })).toThrow('GET x: 503 unavailable');
  });
  it('envFrom with prefix keeps every key (1.32 relaxed names, no skipping); env overrides envFrom', () => {
    const r = run({ name: 'c', envFrom: [{ configMapRef: { name: 'cfg' } }, { prefix: 'DB_', secretRef: { name: 'sec' } }, { configMapRef: { name: 'gone', optional: true } }], env: [{ name: 'color', value: 'red $(DB_user)' }] }, io);
    expect(envOf(r)).toEqual({ color: 'red admin', 'bad key': 'x', '1st': 'y', 'dotted.name': 'z', DB_password: 's3cr3t', DB_user: 'admin' });
    expect(r.env.map((e) => e.key)).toEqual(['color', 'bad key', '1st', 'dotted.name', 'DB_password', 'DB_user']);
    expect(() => run({ name: 'c', envFrom: [{ configMapRef: { name: 'gone' } }] }, io)).toThrow('configmap "gone" not found');
  });
  it('refs lists what must be fetched (a literal value reads nothing)', () => {
    const r = refs({ name: 'c', envFrom: [{ configMapRef: { name: 'a' } }, { secretRef: { name: 'b' } }], env: [{ name: 'x', valueFrom: { configMapKeyRef: { name: 'c', key: 'k' } } }, { name: 'y', value: 'v', valueFrom: { secretKeyRef: { name: 'd', key: 'k' } } }] });
    expect([...r.configMaps]).toEqual(['a', 'c']);
    expect([...r.secrets]).toEqual(['b']);
  });
});

describe('service variables', () => {
  const kubernetes = { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP' }] } };
  const mine = { metadata: { name: 'my-db', namespace: 'ns1' }, spec: { clusterIP: '10.96.3.4', ports: [{ port: 5432 }, { name: 'metrics', port: 9187, protocol: 'UDP' }] } };
  const headless = { metadata: { name: 'hl', namespace: 'ns1' }, spec: { clusterIP: 'None', ports: [{ port: 1 }] } };
  const other = { metadata: { name: 'theirs', namespace: 'ns2' }, spec: { clusterIP: '10.96.9.9', ports: [{ port: 1 }] } };
  it('the kubernetes family and the namespace services', () => {
    const m = Object.fromEntries(serviceEnv('ns1', true, [kubernetes, mine, headless, other]));
    expect(m).toEqual({
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
      KUBERNETES_SERVICE_PORT_HTTPS: '443',
      KUBERNETES_PORT: 'tcp://10.96.0.1:443',
      KUBERNETES_PORT_443_TCP: 'tcp://10.96.0.1:443',
      KUBERNETES_PORT_443_TCP_PROTO: 'tcp',
      KUBERNETES_PORT_443_TCP_PORT: '443',
      KUBERNETES_PORT_443_TCP_ADDR: '10.96.0.1',
      MY_DB_SERVICE_HOST: '10.96.3.4',
      MY_DB_SERVICE_PORT: '5432',
      MY_DB_SERVICE_PORT_METRICS: '9187',
      MY_DB_PORT: 'tcp://10.96.3.4:5432',
      MY_DB_PORT_5432_TCP: 'tcp://10.96.3.4:5432',
      MY_DB_PORT_5432_TCP_PROTO: 'tcp',
      MY_DB_PORT_5432_TCP_PORT: '5432',
      MY_DB_PORT_5432_TCP_ADDR: '10.96.3.4',
      MY_DB_PORT_9187_UDP: 'udp://10.96.3.4:9187',
      MY_DB_PORT_9187_UDP_PROTO: 'udp',
      MY_DB_PORT_9187_UDP_PORT: '9187',
      MY_DB_PORT_9187_UDP_ADDR: '10.96.3.4',
    });
  });
  it('enableServiceLinks false keeps only the kubernetes service; IPv6 is bracketed', () => {
    expect([...serviceEnv('ns1', false, [kubernetes, mine]).keys()].every((k) => k.startsWith('KUBERNETES_'))).toBe(true);
    const v6 = { metadata: { name: 'kubernetes', namespace: 'default' }, spec: { clusterIP: 'fd00::1', ports: [{ port: 443 }] } };
    expect(serviceEnv('default', false, [v6]).get('KUBERNETES_PORT')).toBe('tcp://[fd00::1]:443');
  });
  it('explicit env wins over a service variable; service variables come last', () => {
    const r = run({ name: 'c', env: [{ name: 'KUBERNETES_SERVICE_HOST', value: 'mine' }] }, { services: [kubernetes] });
    expect(envOf(r).KUBERNETES_SERVICE_HOST).toBe('mine');
    expect(r.env[0]).toEqual({ key: 'KUBERNETES_SERVICE_HOST', value: 'mine' });
    expect(r.env.filter((e) => e.key === 'KUBERNETES_SERVICE_HOST')).toHaveLength(1);
    expect(envOf(run({ name: 'c' }, { pod: { ...pod, spec: { enableServiceLinks: false } }, services: [kubernetes, mine] }))).not.toHaveProperty('MY_DB_SERVICE_HOST');
  });
});
