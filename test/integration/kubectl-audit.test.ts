// kubectl 1.32 commands and flags no other test file reached (docs/testing.md
// "kubectl command audit"), against one orch server set up as kube's test-cmd
// (helpers/kubectl-cmd.ts): label/annotate preconditions, edit-last-applied,
// create configmap --from-env-file / service loadbalancer / token with a bound
// object, cluster-info dump, config on the generated kubeconfig, kustomize and
// apply -k, api-resources -o wide, wait --for=create, and events --watch
// seeing a new event.

import { copyFile, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Obj, cmdEnv, sedEditor } from '../helpers/kubectl-cmd.js';
import { runKubectl, startKubectl } from '../helpers/kubectl.js';

const env = cmdEnv();
const { ok, run, fails, json, file, newNs, withEditor, until } = env;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const jwtClaims = (token: string): Obj => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Obj;

describe.concurrent('kubectl command audit', () => {
  it('label and annotate: --resource-version is a precondition, an existing key needs --overwrite', async () => {
    const ns = await newNs('label-rv');
    await ok('create', 'configmap', 'cm', '-n', ns, '--from-literal=a=1');
    const rv = (await json('configmap', 'cm', '-n', ns)).metadata.resourceVersion as string;
    expect(await fails('label', 'configmap', 'cm', '-n', ns, 'tier=web', '--resource-version=1')).toContain('the object has been modified');
    expect(await ok('label', 'configmap', 'cm', '-n', ns, 'tier=web', `--resource-version=${rv}`)).toBe('configmap/cm labeled\n');
    expect(await fails('label', 'configmap', 'cm', '-n', ns, 'tier=db')).toContain("'tier' already has a value (web), and --overwrite is false");
    await ok('label', 'configmap', 'cm', '-n', ns, 'tier=db', '--overwrite');
    const rv2 = (await json('configmap', 'cm', '-n', ns)).metadata.resourceVersion as string;
    expect(await fails('annotate', 'configmap', 'cm', '-n', ns, 'note=x', `--resource-version=${rv}`)).toContain('the object has been modified');
    await ok('annotate', 'configmap', 'cm', '-n', ns, 'note=x', `--resource-version=${rv2}`);
    await ok('annotate', 'configmap', 'cm', '-n', ns, 'note=y', '--overwrite');
    const cm = await json('configmap', 'cm', '-n', ns);
    expect(cm.metadata.labels).toEqual({ tier: 'db' });
    expect(cm.metadata.annotations).toEqual({ note: 'y' });
  });

  it('apply edit-last-applied changes only the annotation; set-last-applied --create-annotation adds one', async () => {
    const ns = await newNs('last-applied');
    const manifest = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: ns }, data: { key: 'before' } };
    await ok('apply', '-f', await file('cm.json', manifest));
    const editor = await sedEditor(env, 'before', 'edited');
    const edited = await withEditor(editor, 'apply', 'edit-last-applied', 'configmap/cm', '-n', ns);
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stdout).toBe('configmap/cm edited\n');
    const cm = await json('configmap', 'cm', '-n', ns);
    expect(cm.data).toEqual({ key: 'before' });
    expect(JSON.parse(cm.metadata.annotations[LAST_APPLIED] as string)).toMatchObject({ data: { key: 'edited' } });
    expect(await ok('apply', 'view-last-applied', 'configmap/cm', '-n', ns, '-o', 'json')).toContain('"key": "edited"');
    // a created (not applied) object has no annotation until --create-annotation
    await ok('create', 'configmap', 'plain', '-n', ns, '--from-literal=k=v');
    const plain = await file('plain.json', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain', namespace: ns }, data: { k: 'v' } });
    expect(await fails('apply', 'set-last-applied', '-f', plain)).toContain('no last-applied-configuration annotation found on resource: plain');
    await ok('apply', 'set-last-applied', '-f', plain, '--create-annotation');
    expect((await json('configmap', 'plain', '-n', ns)).metadata.annotations).toHaveProperty(LAST_APPLIED);
  });

  it('create configmap --from-env-file, service loadbalancer and token --duration --bound-object-kind', async () => {
    const ns = await newNs('create-more');
    const envFile = await file('app.env', '# a comment\nMODE=prod\nGREETING=hello world\n\nEMPTY=\n');
    await ok('create', 'configmap', 'fromenv', '-n', ns, `--from-env-file=${envFile}`);
    expect((await json('configmap', 'fromenv', '-n', ns)).data).toEqual({ MODE: 'prod', GREETING: 'hello world', EMPTY: '' });

    await ok('create', 'service', 'loadbalancer', 'lb', '-n', ns, '--tcp=80:8080');
    const lb = await json('service', 'lb', '-n', ns);
    expect(lb.spec).toMatchObject({ type: 'LoadBalancer', selector: { app: 'lb' }, ports: [{ name: '80-8080', port: 80, targetPort: 8080, protocol: 'TCP' }] });
    // the allocators give a LoadBalancer service a cluster IP and a node port, as for NodePort
    expect(lb.spec.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(lb.spec.ports[0].nodePort).toBeGreaterThanOrEqual(30000);
    expect(await ok('get', 'service', 'lb', '-n', ns)).toMatch(/^lb\s+LoadBalancer\s+\S+\s+<pending>\s+80:\d+\/TCP/m);

    await ok('create', 'serviceaccount', 'bot', '-n', ns);
    await ok('create', 'secret', 'generic', 'anchor', '-n', ns, '--from-literal=x=y');
    const anchorUid = (await json('secret', 'anchor', '-n', ns)).metadata.uid as string;
    const token = (await ok('create', 'token', 'bot', '-n', ns, '--duration=10m', '--bound-object-kind=Secret', '--bound-object-name=anchor', '--audience=audit')).trim();
    const claims = jwtClaims(token);
    expect(claims.exp - claims.iat).toBe(600);
    expect(claims.aud).toEqual(['audit']);
    expect(claims['kubernetes.io']).toMatchObject({ namespace: ns, serviceaccount: { name: 'bot' }, secret: { name: 'anchor', uid: anchorUid } });
    expect(await fails('create', 'token', 'bot', '-n', ns, '--bound-object-kind=Secret', '--bound-object-name=missing')).toContain('secrets "missing" not found');
  });

  it('wait --for=create returns once the object exists; --for=delete once it is gone', async () => {
    const ns = await newNs('wait-create');
    const waiting = run('wait', '-n', ns, '--for=create', 'configmap/later', '--timeout=20s');
    await ok('create', 'configmap', 'later', '-n', ns);
    const r = await waiting;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('configmap/later condition met\n');
    const timedOut = await run('wait', '-n', ns, '--for=create', 'configmap/never', '--timeout=1s');
    expect(timedOut.code).not.toBe(0);
    expect(timedOut.stderr).toContain('timed out waiting for the condition');
  });

  // kubectl's typed create sends protobuf, which always carries Go's non-pointer zeros; kube's JSON
  // leaves out the `omitempty` ones, so `get -o json` shows what kubectl's own dry run shows
  it('objects created through the typed client keep no Go zero that kube leaves out', async () => {
    const ns = await newNs('typed-zeros');
    await Promise.all([
      ok('create', 'ingress', 'ing', '-n', ns, '--rule=a.com/p*=svc:http'),
      ok('create', 'service', 'clusterip', 'headless', '-n', ns, '--clusterip=None'),
      ok('create', 'deployment', 'd', '-n', ns, '--image=nginx', '--port=80'),
      ok('create', 'priorityclass', `pc-${ns}`, '--value=10'),
    ]);
    const [ing, svc, deploy, pc] = await Promise.all([json('ingress', 'ing', '-n', ns), json('service', 'headless', '-n', ns), json('deployment', 'd', '-n', ns), json('priorityclass', `pc-${ns}`)]);
    expect(ing.spec.rules[0].http.paths[0].backend.service.port).toEqual({ name: 'http' });
    expect(svc.spec).not.toHaveProperty('publishNotReadyAddresses');
    expect(deploy.spec).not.toHaveProperty('minReadySeconds');
    expect(deploy.spec).not.toHaveProperty('paused');
    expect(deploy.spec.template.spec.containers[0].ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
    expect(pc).not.toHaveProperty('globalDefault');
  });

  it('cluster-info dump writes the nodes, the namespace objects and the pod logs it can read', async () => {
    const ns = await newNs('dump');
    await ok('create', 'configmap', 'x', '-n', ns);
    await ok('create', 'deployment', 'web', '-n', ns, '--image=nginx');
    const out = join(env.ts().dataDir, 'dump');
    expect(await ok('cluster-info', 'dump', `--namespaces=${ns}`, `--output-directory=${out}`)).toContain(`Cluster info dumped to ${out}`);
    expect((await readdir(out)).sort()).toEqual(['nodes.json', ns].sort());
    expect(JSON.parse(await readFile(join(out, 'nodes.json'), 'utf8'))).toMatchObject({ kind: 'NodeList' });
    const files = await readdir(join(out, ns));
    for (const f of ['deployments.json', 'replicasets.json', 'services.json', 'pods.json', 'events.json']) expect(files).toContain(f);
    const deployments = JSON.parse(await readFile(join(out, ns, 'deployments.json'), 'utf8')) as Obj;
    expect(deployments).toMatchObject({ kind: 'DeploymentList', items: [{ metadata: { name: 'web' } }] });
    // to stdout: one list after another
    const stdout = await ok('cluster-info', 'dump', `--namespaces=${ns}`);
    expect(stdout).toContain('"kind": "NodeList"');
    expect(stdout).toContain('"kind": "DeploymentList"');
  });

  it('config on a copy of the generated kubeconfig: view --minify, get-contexts, set-context --current --namespace', async () => {
    const ns = await newNs('config');
    await ok('create', 'configmap', 'only-here', '-n', ns);
    const kc = join(env.ts().dataDir, 'config-copy.kubeconfig');
    await copyFile(env.ts().server.kubeconfigPath, kc);
    const k = async (...args: string[]): Promise<string> => {
      const r = await runKubectl(kc, args);
      expect(r.code, `kubectl ${args.join(' ')}: ${r.stderr}`).toBe(0);
      return r.stdout;
    };
    const context = (await k('config', 'current-context')).trim();
    expect(await k('config', 'get-contexts', '-o', 'name')).toBe(`${context}\n`);
    const minified = JSON.parse(await k('config', 'view', '--minify', '-o', 'json')) as Obj;
    expect(minified.clusters[0].cluster.server).toBe(env.ts().server.url);
    // the generated kubeconfig authenticates with a bearer token: view hides it, --raw shows it
    expect(minified.users[0].user).toEqual({ token: 'REDACTED' });
    const raw = JSON.parse(await k('config', 'view', '--minify', '--raw', '-o', 'json')) as Obj;
    expect(raw.users[0].user.token).toMatch(/^\S{16,}$/);
    await k('config', 'set-context', '--current', `--namespace=${ns}`);
    expect(await k('config', 'view', '--minify', '-o', 'jsonpath={.contexts[0].context.namespace}')).toBe(ns);
    expect(await k('get', 'configmaps', '-o', 'name')).toContain('configmap/only-here');
    await k('config', 'set-context', 'other', `--cluster=${minified.clusters[0].name as string}`, `--user=${minified.users[0].name as string}`, '--namespace=default');
    await k('config', 'use-context', 'other');
    expect(await k('get', 'configmaps', '-o', 'name')).not.toContain('only-here');
    expect((await k('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}')).length).toBeGreaterThan(0);
  });

  it('kustomize builds a generator with a hash suffix; apply -k creates what it built', async () => {
    const ns = await newNs('kustomize');
    const dir = join(env.ts().dataDir, 'kustomize-app');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'deploy.yaml'), 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector:\n    matchLabels: {app: app}\n  template:\n    metadata:\n      labels: {app: app}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        envFrom:\n        - configMapRef: {name: settings}\n');
    await writeFile(join(dir, 'kustomization.yaml'), `namespace: ${ns}\nnamePrefix: dev-\nresources:\n- deploy.yaml\nconfigMapGenerator:\n- name: settings\n  literals:\n  - MODE=dev\n`);
    const built = await ok('kustomize', dir);
    const cmName = /name: (dev-settings-[a-z0-9]{10})/.exec(built)?.[1];
    expect(cmName, built).toBeDefined();
    expect(await ok('apply', '-k', dir)).toBe(`configmap/${cmName} created\ndeployment.apps/dev-app created\n`);
    expect((await json('configmap', cmName!, '-n', ns)).data).toEqual({ MODE: 'dev' });
    const deploy = await json('deployment', 'dev-app', '-n', ns);
    expect(deploy.spec.template.spec.containers[0].envFrom).toEqual([{ configMapRef: { name: cmName } }]);
    expect(await ok('apply', '-k', dir)).toBe(`configmap/${cmName} unchanged\ndeployment.apps/dev-app unchanged\n`);
  });

  it('api-resources -o wide lists verbs and categories; --namespaced=false and --api-group filter', async () => {
    const wide = await ok('api-resources', '-o', 'wide');
    expect(wide.split('\n')[0]).toMatch(/^NAME\s+SHORTNAMES\s+APIVERSION\s+NAMESPACED\s+KIND\s+VERBS\s+CATEGORIES$/);
    expect(wide).toMatch(/^pods\s+po\s+v1\s+true\s+Pod\s+create,delete,deletecollection,get,list,patch,update,watch\s+all$/m);
    expect(wide).toMatch(/^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment\s+create,delete,deletecollection,get,list,patch,update,watch\s+all$/m);
    expect(wide).toMatch(/^selfsubjectreviews\s+authentication\.k8s\.io\/v1\s+false\s+SelfSubjectReview\s+create\s*$/m);
    const cluster = await ok('api-resources', '--namespaced=false', '-o', 'name');
    expect(cluster.split('\n')).toEqual(expect.arrayContaining(['nodes', 'namespaces', 'clusterroles.rbac.authorization.k8s.io']));
    expect(cluster).not.toMatch(/^pods$/m);
    expect((await ok('api-resources', '--api-group=policy', '-o', 'name')).trim()).toBe('poddisruptionbudgets.policy');
    expect((await ok('api-resources', '--verbs=create', '--verbs=get', '--api-group=authentication.k8s.io', '-o', 'name')).trim()).toBe('');
  });

  it('events --watch prints a new event for the object of --for', async () => {
    const ns = await newNs('events-watch');
    await ok('create', 'configmap', 'watched', '-n', ns);
    const kc = env.ts().server.kubeconfigPath;
    const w = startKubectl(kc, ['events', '-n', ns, '--for=configmap/watched', '--watch']);
    try {
      const event = {
        apiVersion: 'v1', kind: 'Event', metadata: { name: 'watched.1', namespace: ns },
        involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'watched', namespace: ns },
        reason: 'Audited', message: 'seen by the watch', type: 'Normal', source: { component: 'audit-test' },
        firstTimestamp: new Date().toISOString(), lastTimestamp: new Date().toISOString(), count: 1,
      };
      await ok('create', '-f', await file('event.json', event));
      await until(async () => /Normal\s+Audited\s+ConfigMap\/watched\s+seen by the watch/.test(w.out()), 'the watched event');
      const other = { ...event, metadata: { name: 'other.1', namespace: ns }, involvedObject: { ...event.involvedObject, name: 'other' }, reason: 'Elsewhere' };
      await ok('create', '-f', await file('event-other.json', other));
      // the list after it shows both; the watch filtered by --for shows only its object's
      await until(async () => (await ok('events', '-n', ns)).includes('Elsewhere'), 'the other event listed');
      expect(w.out()).not.toContain('Elsewhere');
    } finally {
      await w.stop();
    }
    const r = await run('events', '-n', ns, '--for=configmap/watched', '--types=Warning');
    expect(r.stdout + r.stderr).toContain('No events found');
  });
});
