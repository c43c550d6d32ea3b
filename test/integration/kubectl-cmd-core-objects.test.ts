// kubectl's command tests of core.sh's other kinds (kubernetes/kubernetes
// test/cmd/core.sh run_configmap_tests, run_create_secret_tests,
// run_secrets_test, run_service_accounts_tests, run_service_tests, run_rc_tests,
// run_namespace_tests, run_pod_templates_tests; and the functions older
// core.sh versions held: run_lists_tests, run_persistent_volumes_tests,
// run_persistent_volume_claims_tests, run_storage_class_tests,
// run_kubectl_all_namespace_tests), run with the real kubectl 1.32 against
// orch set up as test-cmd sets up kube (see test/helpers/kubectl-cmd.ts).
// Our own small manifests stand in for kube's fixtures.
//
// Ported: config maps (dry-run, literal and binary data); secrets (not-found
// message, generic with a type, docker-registry, tls, stringData merged into
// data, go-template output, --raw create / replace / delete); service
// accounts; services (describe, set selector from a file and on the server,
// --resource-version preconditions, re-create from a JSON dump keeping its
// cluster IP, replace of the live object, custom columns, ExternalName,
// `run --expose`, `expose --overrides`); replication controllers (pods
// collected after the controller is deleted, describe, scale with
// --current-replicas, several at once, a deployment; expose of an rc, a
// service, a pod, a deployment, with several ports, the name's validation;
// autoscale and its default target; set resources); namespaces (dry-run,
// --wait=false then `wait --for=delete`, quotas, pods in another namespace);
// pod templates; a List of several versions; volumes, claims and storage
// classes; --all-namespaces listings.
// Skipped (client side only): run_client_config_tests (kubeconfig loading), the
// --local and --dry-run=client forms whose output never reaches a server,
// `expose` of a file's deployment (kubectl builds that service itself), the
// `delete namespace --all` step (it would delete every test namespace of the
// shared server).

import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv } from '../helpers/kubectl-cmd.js';

const env = cmdEnv();
const { ok, run, fails, json, names, api, apiNames, file, newNs } = env;

const rc = (name: string, replicas: number, labels: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'ReplicationController',
  metadata: { name, labels },
  spec: {
    replicas,
    selector: labels,
    template: {
      metadata: { labels },
      spec: { containers: [{ name: 'php-redis', image: 'gb-frontend:v4', resources: { requests: { cpu: '100m', memory: '100Mi' } }, env: [{ name: 'GET_HOSTS_FROM', value: 'dns' }], ports: [{ containerPort: 80 }] }] },
    },
  },
});
const FRONTEND = rc('frontend', 3, { app: 'guestbook', tier: 'frontend' });
const deployment = (name: string, replicas: number, containers: Obj[]): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels: { app: name } },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers } } },
});
const redisMaster: Obj = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'redis-master', labels: { app: 'redis', role: 'master', tier: 'backend' } },
  spec: { ports: [{ port: 6379, targetPort: 6379 }], selector: { app: 'redis', role: 'master', tier: 'backend' } },
};

describe.concurrent('core.sh: config maps, secrets, service accounts, namespaces, pod templates', () => {
  it('creates config maps with literal and binary data, only without --dry-run', async () => {
    const ns = await newNs('test-configmaps');
    for (const dry of ['client', 'server']) await ok('create', 'configmap', 'test-configmap', `--dry-run=${dry}`, '--from-literal=key1=value1', '-n', ns);
    expect(await apiNames(`/api/v1/namespaces/${ns}/configmaps`)).toEqual(['kube-root-ca.crt']);
    const binary = await file('binary', Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80]));
    await Promise.all([ok('create', 'configmap', 'test-configmap', '--from-literal=key1=value1', '-n', ns), ok('create', 'configmap', 'test-binary-configmap', '--from-file', binary, '-n', ns)]);
    const [text, bin] = await Promise.all([ok('get', 'configmap/test-configmap', '-n', ns, '-o', 'yaml'), ok('get', 'configmap/test-binary-configmap', '-n', ns, '-o', 'yaml')]);
    expect(text).toContain('key1: value1');
    expect(bin).toContain('binaryData');
    const chunked = await run('describe', 'configmaps', '-n', ns, '--show-events=true', '--chunk-size=10', '-v=6');
    expect(chunked.stderr).toMatch(/configmaps\?limit=10/);
    expect(chunked.stderr).toMatch(/events\?.*limit=10/);
  });

  it('creates secrets of each type; stringData is merged into data', async () => {
    expect(await fails('get', 'secrets', 'mysecret')).toContain('secrets "mysecret" not found');
    expect(await ok('create', 'secret', 'generic', 'mysecret', '--dry-run=client', '--from-literal=foo=bar', '-o', 'jsonpath={.metadata.namespace}', '--namespace=user-specified')).toBe('user-specified');
    const ns = await newNs('test-secrets');
    await ok('create', 'secret', 'generic', 'test-secret', '--from-literal=key1=value1', '--type=test-type', '-n', ns);
    await ok('create', 'secret', 'docker-registry', 'test-docker', '--docker-username=test-user', '--docker-password=test-password', '--docker-email=test-user@test.com', '-n', ns);
    const cert = await file('tls.crt', TLS_CRT);
    const key = await file('tls.key', TLS_KEY);
    await ok('create', 'secret', 'tls', 'test-tls', `--key=${key}`, `--cert=${cert}`, '-n', ns);
    await ok('create', '-n', ns, '-f', await file('string-data.json', { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'secret-string-data' }, data: { k1: 'djE=', k2: '' }, stringData: { k2: 'v2' } }));
    expect(await ok('create', 'secret', 'generic', 'test-output', '-n', ns, '--from-literal=key1=value1', '--output=go-template', '--template={{.metadata.name}}:')).toBe('test-output:');
    const byName = Object.fromEntries(((await json('secrets', '-n', ns)).items as Obj[]).map((s) => [s.metadata.name, s]));
    expect(byName['test-secret']).toMatchObject({ type: 'test-type', data: { key1: 'dmFsdWUx' } });
    const docker = byName['test-docker']!;
    expect(docker.type).toBe('kubernetes.io/dockerconfigjson');
    expect(JSON.parse(Buffer.from(docker.data['.dockerconfigjson'], 'base64').toString())).toEqual({
      auths: { 'https://index.docker.io/v1/': { username: 'test-user', password: 'test-password', email: 'test-user@test.com', auth: Buffer.from('test-user:test-password').toString('base64') } },
    });
    expect(byName['test-tls']!.type).toBe('kubernetes.io/tls');
    expect(byName['secret-string-data']!.data).toEqual({ k1: 'djE=', k2: 'djI=' });
    expect(byName['secret-string-data']!.stringData).toBeUndefined();
    // kube validates the well-known types: a docker config must be a JSON object, a token names its account
    const notJson = await file('dockerconfig.json', 'notjson\n');
    expect(await fails('create', 'secret', 'docker-registry', 'bad', `--from-file=.dockerconfigjson=${notJson}`, '-n', ns)).toContain(
      'Secret "bad" is invalid: data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": invalid character \'o\' in literal null (expecting \'u\')',
    );
    expect(await fails('create', 'secret', 'generic', 'token', '--type=kubernetes.io/service-account-token', '-n', ns)).toContain(
      'Secret "token" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value',
    );
    expect(await fails('create', 'secret', 'generic', 'basic', '--type=kubernetes.io/basic-auth', '--from-literal=user=x', '-n', ns)).toContain(
      'Secret "basic" is invalid: [data[username]: Required value, data[password]: Required value]',
    );
    // data that is not base64: Go's decoder error, which names no field
    const notBase64 = await file('b64.json', { kind: 'Secret', apiVersion: 'v1', metadata: { name: 'b64' }, data: { a: 'not base64!' } });
    expect(await fails('create', '-n', ns, '-f', notBase64)).toContain('Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3');
    const chunked = await run('describe', 'secrets', '-n', ns, '--chunk-size=10', '-v=6');
    expect(chunked.stderr).toMatch(/secrets\?limit=10/);
  });

  it('creates, replaces and deletes a config map through --raw', async () => {
    const ns = await newNs('raw');
    const empty = await file('cm.json', await ok('create', 'configmap', 'tester-update-cm', '-o', 'json', '--dry-run=client'));
    await ok('create', '--raw', `/api/v1/namespaces/${ns}/configmaps`, '-f', empty);
    const full = await file('cm2.json', await ok('create', 'configmap', 'tester-update-cm', '--from-literal=key1=config1', '-o', 'json', '--dry-run=client'));
    expect(await ok('replace', '--raw', `/api/v1/namespaces/${ns}/configmaps/tester-update-cm`, '-f', full)).toContain('uid');
    expect(await ok('get', '--raw', `/api/v1/namespaces/${ns}/configmaps/tester-update-cm`)).toContain('config1');
    await ok('delete', '--raw', `/api/v1/namespaces/${ns}/configmaps/tester-update-cm`);
    expect(await fails('get', 'configmap', 'tester-update-cm', '-n', ns)).toContain('configmaps "tester-update-cm" not found');
  });

  it('creates a service account only without --dry-run; describe lists its secrets and events in chunks', async () => {
    const ns = await newNs('test-service-accounts');
    for (const dry of ['client', 'server']) await ok('create', 'serviceaccount', 'test-service-account', `--dry-run=${dry}`, '-n', ns);
    expect(await api(`/api/v1/namespaces/${ns}/serviceaccounts/test-service-account`)).toBeUndefined();
    await ok('create', 'serviceaccount', 'test-service-account', '-n', ns);
    expect(await ok('get', 'serviceaccount/test-service-account', '-n', ns, '-o', 'go-template={{.metadata.name}}')).toBe('test-service-account');
    const chunked = await run('describe', 'serviceaccounts', '-n', ns, '--show-events=true', '--chunk-size=10', '-v=6');
    for (const r of ['serviceaccounts', 'secrets', 'events']) expect(chunked.stderr).toMatch(new RegExp(`${r}\\?.*limit=10`));
  });

  it('creates namespaces; delete --wait=false, then wait --for=delete; quotas; pods of another namespace', async () => {
    expect(await fails('get', 'ns/my-namespace')).toContain(' not found');
    for (const dry of ['client', 'server']) await ok('create', 'namespace', 'my-namespace', `--dry-run=${dry}`);
    expect(await fails('get', 'ns/my-namespace')).toContain(' not found');
    await ok('create', 'namespace', 'my-namespace');
    expect(await ok('get', 'namespaces/my-namespace', '-o', 'go-template={{.metadata.name}}')).toBe('my-namespace');
    const chunked = await run('describe', 'namespaces', 'my-namespace', '--chunk-size=10', '-v=6');
    for (const r of ['resourcequotas', 'limitranges']) expect(chunked.stderr).toMatch(new RegExp(`${r}\\?.*limit=10`));
    await ok('delete', 'namespace', 'my-namespace', '--wait=false');
    await ok('wait', '--for=delete', 'ns/my-namespace', '--timeout=30s');
    expect(await fails('get', 'ns/my-namespace')).toContain(' not found');

    const quotas = await newNs('quotas');
    for (const dry of ['client', 'server']) await ok('create', 'quota', 'test-quota', `--dry-run=${dry}`, '-n', quotas);
    expect(await apiNames(`/api/v1/namespaces/${quotas}/resourcequotas`)).toEqual([]);
    await ok('create', 'quota', 'test-quota', '-n', quotas);
    expect(await apiNames(`/api/v1/namespaces/${quotas}/resourcequotas`)).toEqual(['test-quota']);

    const other = await newNs('other');
    await ok('create', '--namespace', other, '-f', await file('valid-pod.json', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'valid-pod' }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/serve_hostname' }] } }));
    expect(await names('pods', '-n', other)).toEqual(['valid-pod']);
    expect(await fails('get', 'pod', 'valid-pod', '--all-namespaces')).toContain('a resource cannot be retrieved by name across all namespaces');
    await ok('delete', 'pod', '--namespace', other, 'valid-pod', '--grace-period=0', '--force');
    expect(await names('pods', '-n', other)).toEqual([]);
  });

  it('creates, prints and deletes a pod template', async () => {
    const ns = await newNs('podtemplates');
    const tpl = { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'nginx' }, template: { metadata: { labels: { name: 'nginx' } }, spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 80 }] }] } } };
    await ok('create', '-n', ns, '-f', await file('podtemplate.json', tpl));
    const [table, yaml] = await Promise.all([ok('get', 'podtemplates', '-n', ns), ok('get', 'podtemplates', '-n', ns, '-o', 'yaml')]);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+CONTAINERS\s+IMAGES\s+POD LABELS$/);
    expect(table).toMatch(/^nginx\s+nginx\s+nginx\s+name=nginx$/m); // no AGE, as kube prints it
    expect(yaml).toContain('nginx');
    // the template's pod spec is validated as a pod's (kube's ValidatePodTemplate), any restart policy
    const noImage = { ...tpl, metadata: { name: 'no-image' }, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'nginx' }] } } };
    expect(await fails('create', '-n', ns, '-f', await file('no-image.json', noImage))).toContain('The PodTemplate "no-image" is invalid: template.spec.containers[0].image: Required value');
    await ok('delete', 'podtemplate', 'nginx', '-n', ns);
    expect(await apiNames(`/api/v1/namespaces/${ns}/podtemplates`)).toEqual([]);
  });

  it('creates a List of several API versions; volumes, claims and storage classes; --all-namespaces', async () => {
    const ns = await newNs('lists');
    const list = { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'list-service-test' }, spec: { ports: [{ protocol: 'TCP', port: 80 }], selector: { app: 'list-deployment-test' } } }, deployment('list-deployment-test', 1, [{ name: 'nginx', image: 'nginx' }])] };
    expect(await ok('create', '-n', ns, '-f', await file('list.json', list))).toBe('service/list-service-test created\ndeployment.apps/list-deployment-test created\n');
    await ok('delete', '-n', ns, 'service/list-service-test', 'deployment/list-deployment-test');

    await ok('create', '-f', await file('pv.json', { kind: 'PersistentVolume', apiVersion: 'v1', metadata: { name: 'pv0001' }, spec: { accessModes: ['ReadWriteOnce'], capacity: { storage: '10Gi' }, hostPath: { path: '/somepath/data01' } } }));
    expect(await names('pv')).toEqual(['pv0001']);
    await ok('delete', 'pv', 'pv0001');
    await ok('create', '-n', ns, '-f', await file('pvc.json', { kind: 'PersistentVolumeClaim', apiVersion: 'v1', metadata: { name: 'myclaim-1' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '3Gi' } } } }));
    expect(await names('pvc', '-n', ns)).toEqual(['myclaim-1']);
    await ok('delete', 'pvc', 'myclaim-1', '-n', ns);
    const sc = { kind: 'StorageClass', apiVersion: 'storage.k8s.io/v1', metadata: { name: 'storage-class-name' }, provisioner: 'kubernetes.io/fake-provisioner-type', parameters: { zone: 'us-east-1b', type: 'ssd' } };
    await ok('create', '-f', await file('sc.json', sc));
    expect(await Promise.all([names('storageclass'), names('sc')])).toEqual([['storage-class-name'], ['storage-class-name']]);
    await ok('delete', 'storageclass', 'storage-class-name');
    expect(await apiNames('/api/v1/persistentvolumes')).toEqual([]);
    expect(await apiNames(`/api/v1/namespaces/${ns}/persistentvolumeclaims`)).toEqual([]);
    expect(await apiNames('/apis/storage.k8s.io/v1/storageclasses')).toEqual([]);

    const [a, b] = [await newNs('all-ns-test'), await newNs('all-ns-test')];
    await Promise.all([ok('create', 'serviceaccount', 'test', '-n', a), ok('create', 'serviceaccount', 'test', '-n', b)]);
    for (const flag of ['--all-namespaces', '-A']) {
      const out = await ok('get', 'serviceaccounts', flag, '--namespace=default');
      expect(out.split('\n')[0]).toMatch(/^NAMESPACE\s+NAME\s+SECRETS\s+AGE$/);
      expect(out).toMatch(new RegExp(`^${a}\\s+test\\s+0\\s+`, 'm'));
      expect(out).toMatch(new RegExp(`^${b}\\s+test\\s+0\\s+`, 'm'));
    }
    // cluster-scoped: no NAMESPACE column
    expect(await ok('get', 'storageclasses,priorityclasses', '--all-namespaces')).not.toContain('NAMESPACE');
  });
});

describe.concurrent('core.sh: services and replication controllers', () => {
  it('describes a service, sets its selector, re-creates it from a dump and replaces it', async () => {
    const ns = await newNs('services');
    const f = await file('redis-master.json', redisMaster);
    await ok('create', '-n', ns, '-f', f);
    const [one, all] = await Promise.all([ok('describe', '-n', ns, 'services', 'redis-master'), ok('describe', '-n', ns, 'services')]);
    for (const out of [one, all]) for (const s of ['Name:', 'Labels:', 'Selector:', 'IP:', 'Port:', 'Endpoints:', 'Session Affinity:', 'Events:']) expect(out).toContain(s);
    const selector = async (): Promise<Obj> => (await api(`/api/v1/namespaces/${ns}/services/redis-master`))!.spec.selector;
    expect(await selector()).toEqual({ app: 'redis', role: 'master', tier: 'backend' });

    await ok('set', 'selector', '-n', ns, '-f', f, 'role=padawan');
    expect(await selector()).toEqual({ role: 'padawan' });
    await ok('set', 'selector', '-n', ns, '-f', f, 'app=redis,role=master,tier=backend');
    expect(await ok('set', 'selector', '-n', ns, 'services', 'redis-master', 'role=padawan', '--dry-run=server', '-o', 'yaml')).toContain('role: padawan');
    expect(await selector()).toEqual({ app: 'redis', role: 'master', tier: 'backend' });
    expect(await ok('get', '-n', ns, 'services', 'redis-master', '--show-managed-fields', '-o=jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-set');
    const rv = await ok('get', '-n', ns, 'services', 'redis-master', '-o', 'jsonpath={.metadata.resourceVersion}');
    await ok('set', 'selector', '-n', ns, 'services', 'redis-master', 'rvtest1=true', `--resource-version=${rv}`);
    expect(await fails('set', 'selector', '-n', ns, 'services', 'redis-master', 'rvtest1=true', '--resource-version=1')).toContain('Conflict');

    // a dump carries the cluster IP it had: the re-created service gets it again
    const dump = await ok('get', '-n', ns, 'service', 'redis-master', '-o', 'json');
    await ok('delete', '-n', ns, 'service', 'redis-master');
    await ok('create', '-n', ns, '-f', await file('dump.json', dump));
    expect((await api(`/api/v1/namespaces/${ns}/services/redis-master`))!.spec.clusterIP).toBe(JSON.parse(dump).spec.clusterIP);
    await ok('create', '-n', ns, '-f', await file('v1-test.json', { kind: 'Service', apiVersion: 'v1', metadata: { name: 'service-v1-test' }, spec: { ports: [{ protocol: 'TCP', port: 80, targetPort: 80 }] } }));
    await ok('replace', '-n', ns, '-f', await file('identity.json', await ok('get', '-n', ns, 'service', 'service-v1-test', '-o', 'json')));
    expect(await apiNames(`/api/v1/namespaces/${ns}/services`)).toEqual(['redis-master', 'service-v1-test']);
    const columns = await ok('get', '-n', ns, 'services', '-o=custom-columns=NAME:.metadata.name,RSRC:.metadata.resourceVersion');
    expect(columns).toMatch(/^redis-master\s+\d+$/m);
    await ok('delete', '-n', ns, 'services', 'redis-master', 'service-v1-test');
    expect(await apiNames(`/api/v1/namespaces/${ns}/services`)).toEqual([]);
  });

  it('creates an ExternalName service; run --expose; expose --overrides', async () => {
    const ns = await newNs('services-gen');
    for (const dry of ['client', 'server']) await ok('create', '-n', ns, 'service', 'externalname', 'beep-boop', `--dry-run=${dry}`, '--external-name', 'bar.com');
    expect(await apiNames(`/api/v1/namespaces/${ns}/services`)).toEqual([]);
    await ok('create', '-n', ns, 'service', 'externalname', 'beep-boop', '--external-name', 'bar.com');
    expect(await ok('get', '-n', ns, 'services', 'beep-boop')).toMatch(/^beep-boop\s+ExternalName\s+<none>\s+bar\.com\s+<none>\s+/m);
    await ok('delete', '-n', ns, 'service', 'beep-boop');

    for (const dry of ['client', 'server']) await ok('run', '-n', ns, 'testmetadata', '--image=nginx', '--port=80', '--expose', `--dry-run=${dry}`);
    expect(await apiNames(`/api/v1/namespaces/${ns}/services`)).toEqual([]);
    await ok('run', '-n', ns, 'testmetadata', '--image=nginx', '--port=80', '--expose');
    expect(await apiNames(`/api/v1/namespaces/${ns}/pods`)).toEqual(['testmetadata']);
    const svc = (await api(`/api/v1/namespaces/${ns}/services/testmetadata`))!;
    expect(svc.spec.ports[0].port).toBe(80);
    expect(await ok('get', '-n', ns, 'pod', 'testmetadata', '--show-managed-fields', '-o=jsonpath={.metadata.managedFields[*].manager}')).toContain('kubectl-run');
    await ok('expose', '-n', ns, 'pod', 'testmetadata', '--port=1000', '--target-port=80', '--type=NodePort', '--name=exposemetadata', '--overrides={ "metadata": { "annotations": { "zone-context": "work" } } } ');
    const exposed = await json('service', 'exposemetadata', '-n', ns, '--show-managed-fields');
    expect(exposed.metadata.annotations).toEqual({ 'zone-context': 'work' });
    expect(exposed.metadata.managedFields.map((m: Obj) => m.manager)).toContain('kubectl-expose');
    expect(exposed.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
  });

  it('deletes a controller with its pods; describes, scales and exposes one', async () => {
    const ns = await newNs('rcs');
    const f = await file('frontend.json', FRONTEND);
    await ok('create', '-n', ns, '-f', f);
    await ok('delete', '-n', ns, 'rc', 'frontend');
    // the garbage collector removes the pods the controller made (kube::test::wait_object_assert)
    const deadline = Date.now() + 20_000;
    while ((await apiNames(`/api/v1/namespaces/${ns}/pods?labelSelector=tier%3Dfrontend`)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await apiNames(`/api/v1/namespaces/${ns}/pods?labelSelector=tier%3Dfrontend`)).toEqual([]);

    await ok('create', '-n', ns, '-f', f);
    const [one, all] = await Promise.all([ok('describe', '-n', ns, 'rc', 'frontend'), ok('describe', '-n', ns, 'rc')]);
    for (const out of [one, all]) for (const s of ['Name:', 'Pod Template:', 'Labels:', 'Selector:', 'Replicas:', 'Pods Status:', 'Volumes:', 'GET_HOSTS_FROM:', 'Events:']) expect(out).toContain(s);
    const replicas = async (name = 'frontend'): Promise<number> => (await api(`/api/v1/namespaces/${ns}/replicationcontrollers/${name}`))!.spec.replicas;
    await ok('scale', '-n', ns, '--current-replicas=3', '--replicas=2', 'replicationcontrollers', 'frontend');
    expect(await replicas()).toBe(2);
    expect(await fails('scale', '-n', ns, '--current-replicas=3', '--replicas=2', 'replicationcontrollers', 'frontend')).toContain('Expected replicas to be 3, was 2');
    expect(await replicas()).toBe(2);
    await ok('scale', '-n', ns, '--replicas=3', 'replicationcontrollers', 'frontend');
    expect(await replicas()).toBe(3);
    await ok('scale', '-n', ns, '--replicas=2', '-f', f);
    expect(await replicas()).toBe(2);

    await Promise.all([ok('create', '-n', ns, '-f', await file('rm.json', rc('redis-master', 1, { app: 'redis', role: 'master' }))), ok('create', '-n', ns, '-f', await file('rs.json', rc('redis-slave', 2, { app: 'redis', role: 'slave' })))]);
    await ok('scale', '-n', ns, 'rc/redis-master', 'rc/redis-slave', '--replicas=4');
    expect([await replicas('redis-master'), await replicas('redis-slave')]).toEqual([4, 4]);
    await ok('delete', '-n', ns, 'rc', 'redis-master', 'redis-slave');

    await ok('create', '-n', ns, '-f', await file('deploy.json', deployment('nginx-deployment', 3, [{ name: 'nginx', image: 'nginx:1.14.2', ports: [{ containerPort: 80 }] }])));
    await ok('scale', '-n', ns, '--current-replicas=3', '--replicas=1', 'deployment/nginx-deployment');
    expect((await api(`/apis/apps/v1/namespaces/${ns}/deployments/nginx-deployment`))!.spec.replicas).toBe(1);
    expect(await ok('expose', '-n', ns, 'deployment/nginx-deployment')).toContain('service/nginx-deployment exposed');
    const port = async (name: string): Promise<Obj[]> => (await api(`/api/v1/namespaces/${ns}/services/${name}`))!.spec.ports;
    expect((await port('nginx-deployment'))[0]!.port).toBe(80);

    await ok('expose', '-n', ns, 'rc', 'frontend', '--port=80');
    await ok('expose', '-n', ns, 'service', 'frontend', '--port=443', '--name=frontend-2');
    await ok('create', '-n', ns, '-f', await file('valid-pod.json', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'valid-pod', labels: { name: 'valid-pod' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/serve_hostname' }] } }));
    await ok('expose', '-n', ns, 'pod', 'valid-pod', '--port=444', '--name=frontend-3');
    await ok('expose', '-n', ns, 'service', 'frontend', '--name=frontend-4');
    const ports = await Promise.all(['frontend', 'frontend-2', 'frontend-3', 'frontend-4'].map(async (s) => (await port(s)).map((p) => [p.name, p.port])));
    expect(ports).toEqual([[[undefined, 80]], [[undefined, 443]], [[undefined, 444]], [[undefined, 80]]]);
    await ok('create', '-f', await file('node.json', { kind: 'Node', apiVersion: 'v1', metadata: { name: '127.0.0.1' } }));
    expect(await fails('expose', '-n', ns, 'nodes', '127.0.0.1')).toContain('cannot expose a Node');
    expect(await fails('expose', '-n', ns, 'rc', 'frontend', '--name=invalid-large-service-name-that-has-more-than-sixty-three-characters', '--port=8081')).toContain(
      'metadata.name: Invalid value: "invalid-large-service-name-that-has-more-than-sixty-three-characters": must be no more than 63 characters',
    );

    const etcd = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'etcd-server' }, spec: { containers: [{ name: 'etcd-container', image: 'registry.k8s.io/etcd:3.5', ports: [{ name: 'serverport', containerPort: 2380 }, { name: 'clientport', containerPort: 2379 }] }] } };
    expect(await ok('expose', '-n', ns, '-f', await file('etcd.json', etcd), '--selector=test=etcd')).toContain('etcd-server exposed');
    expect((await port('etcd-server')).map((p) => [p.name, p.port])).toEqual([
      ['port-1', 2380],
      ['port-2', 2379],
    ]);
  });

  it('autoscales a controller (a default CPU target) and sets a deployment\'s resources', async () => {
    const ns = await newNs('rc-autoscale');
    const f = await file('frontend.json', FRONTEND);
    await ok('create', '-n', ns, '-f', f);
    const hpa = async (): Promise<string> => ok('get', '-n', ns, 'hpa', 'frontend', '-o', 'go-template={{.spec.minReplicas}} {{.spec.maxReplicas}} {{(index .spec.metrics 0).resource.target.averageUtilization}}');
    await ok('autoscale', '-n', ns, '-f', f, '--max=2', '--cpu-percent=70');
    expect(await hpa()).toBe('1 2 70');
    await ok('delete', '-n', ns, 'hpa', 'frontend');
    await ok('autoscale', '-n', ns, 'rc', 'frontend', '--min=2', '--max=3');
    expect(await hpa()).toBe('2 3 80');
    await fails('autoscale', '-n', ns, 'rc', 'frontend');

    const d = await file('resources.json', deployment('nginx-deployment-resources', 3, [{ name: 'nginx', image: 'registry.k8s.io/nginx:test-cmd' }, { name: 'perl', image: 'registry.k8s.io/perl' }]));
    await ok('create', '-n', ns, '-f', d);
    const cpu = async (): Promise<string[]> =>
      ((await api(`/apis/apps/v1/namespaces/${ns}/deployments/nginx-deployment-resources`))!.spec.template.spec.containers as Obj[]).map((c) => `${c.resources.limits?.cpu}/${c.resources.requests?.cpu}`);
    await ok('set', 'resources', '-n', ns, 'deployment', 'nginx-deployment-resources', '--limits=cpu=100m');
    expect(await cpu()).toEqual(['100m/undefined', '100m/undefined']);
    await fails('set', 'resources', '-n', ns, 'deployment', 'nginx-deployment-resources', '-c=redis', '--limits=cpu=100m');
    await ok('set', 'resources', '-n', ns, 'deployment', 'nginx-deployment-resources', '-c=nginx', '--limits=cpu=200m');
    await ok('set', 'resources', '-n', ns, '-f', d, '-c=perl', '--limits=cpu=300m', '--requests=cpu=300m');
    expect(await cpu()).toEqual(['200m/undefined', '300m/300m']);
    expect(await ok('set', 'resources', '-n', ns, 'deployment', 'nginx-deployment-resources', '-c=perl', '--limits=cpu=400m', '--requests=cpu=400m', '--dry-run=server', '-o', 'yaml')).toContain('cpu: 400m');
    expect(await cpu()).toEqual(['200m/undefined', '300m/300m']);
  });
});

// a self-signed certificate and its key (any PEM pair does: kubectl checks that they match)
const TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmeloxWJ9gNMB9VTO
Ub9erHq4p7AFF3dpTsozdmYEyayhRANCAASk1t8SXaVVS1WafbmHF0/3WRD7lf0B
kq7cWd2fdmvUBQS6kcKfj7EexQIqr7I61wcfLPNGxqvlMw80YCEbZ/0i
-----END PRIVATE KEY-----
`;
const TLS_CRT = `-----BEGIN CERTIFICATE-----
MIIBczCCARmgAwIBAgIUXOaJB8ADWUO8umAQ2zViSscZF9AwCgYIKoZIzj0EAwIw
DjEMMAoGA1UEAwwDZm9vMCAXDTI2MTEyOTEzMTU1OFoYDzIxMjYxMTA1MTMxNTU4
WjAOMQwwCgYDVQQDDANmb28wWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAASk1t8S
XaVVS1WafbmHF0/3WRD7lf0Bkq7cWd2fdmvUBQS6kcKfj7EexQIqr7I61wcfLPNG
xqvlMw80YCEbZ/0io1MwUTAdBgNVHQ4EFgQU/He98KlbDxHmekwwP+n+BTbskqQw
HwYDVR0jBBgwFoAU/He98KlbDxHmekwwP+n+BTbskqQwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNIADBFAiBv7Vr5kHXY23iDzGAAh1WYjmUz6AB0lBgiZGi4
vru96wIhAN9lp3EOYya2kfnsjVDjkeT1U4NY9/JDln1hVCbmvDkU
-----END CERTIFICATE-----
`;
