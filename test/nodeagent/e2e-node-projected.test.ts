// Kubernetes' sig-storage e2e conformance tests of projected volumes
// (test/e2e/common/storage/projected_downwardapi.go, projected_configmap.go,
// projected_secret.go, projected_combined.go), on orch with kube's API domain
// and a real node agent on the simulated runtime: the plain volume suites of
// test/helpers/e2e-node-volume-suites.ts with each source inside a projected
// volume, and one volume projecting a pod field, a Secret and a ConfigMap.
// "[sig-auth] ServiceAccounts" (test/e2e/auth/service_accounts.go), the two
// that need a node: the automounted token, CA and namespace read with `kubectl
// exec` (the token passes a TokenReview as the pod's ServiceAccount), and a
// projected serviceAccountToken source read by the container.
// Not ported: the [NodeFeature:FSGroup] tests (no fsGroup ownership changes).

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AGNHOST, e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { runKubectl } from '../helpers/kubectl.js';
import { mounttest } from '../helpers/e2e-node-mounttest.js';
import { BUSYBOX, PODS, testContainerOutput, uniqueName } from '../helpers/e2e-node-output.js';
import { configMapVolumeSuite, downwardApiVolumeSuite, secretVolumeSuite } from '../helpers/e2e-node-volume-suites.js';

const node = 'projected-node';
const env = e2eEnv(node, { syncFrequency: '2s' }) /* the update tests wait for the periodic volume refresh (kubelet's default: a minute) */;
const suite = { env, node, projected: true };
downwardApiVolumeSuite(suite);
configMapVolumeSuite(suite);
secretVolumeSuite(suite);

describe('[sig-storage] Projected combined', () => {
  it('should project all components that make up the projection API [Projection][NodeConformance] [Conformance]', async () => {
    const n = await namespace(env, `projected-${Math.random().toString(36).slice(2, 8)}`);
    const [podName, secretName, configMapName] = ['projected-volume-', 'secret-projected-all-test-volume-', 'configmap-projected-all-test-volume-'].map(uniqueName) as [string, string, string];
    await env.call('POST', `/api/v1/namespaces/${n}/configmaps`, { metadata: { name: configMapName }, data: { 'configmap-data': 'configmap-value-1' } });
    await env.call('POST', `/api/v1/namespaces/${n}/secrets`, { metadata: { name: secretName }, data: { 'secret-data': Buffer.from('secret-value-1').toString('base64') } });
    const sources = [
      { downwardAPI: { items: [{ path: 'podname', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } }] } },
      { secret: { name: secretName } },
      { configMap: { name: configMapName } },
    ];
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: podName },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'podinfo', projected: { sources } }],
        // kube's own command: busybox cat, run for real by the simulator
        containers: [{ name: 'projected-all-volume-test', image: BUSYBOX, command: ['sh', '-c', 'cat /all/podname && cat /all/secret-data && cat /all/configmap-data'], volumeMounts: [{ name: 'podinfo', mountPath: '/all' }] }],
      },
    };
    await testContainerOutput(env, n, pod, 0, [podName, 'secret-value-1', 'configmap-value-1']);
  });
});

describe('[sig-auth] ServiceAccounts (service_accounts.go, with the agent)', () => {
  const TOKEN_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

  it('should mount an API token into pods [Conformance]', async () => {
    const n = await namespace(env, `svcaccounts-${Math.random().toString(36).slice(2, 8)}`);
    await env.call('POST', `/api/v1/namespaces/${n}/serviceaccounts`, { metadata: { name: 'mount-test' } });
    const podName = uniqueName('pod-service-account-');
    await env.call('POST', PODS(n), {
      metadata: { name: podName },
      spec: { serviceAccountName: 'mount-test', containers: [{ name: 'test', image: BUSYBOX, command: ['sleep', '100000'] }], terminationGracePeriodSeconds: 0, restartPolicy: 'Never' },
    });
    await env.eventually(async () => (await env.get(`${PODS(n)}/${podName}`)).status?.phase === 'Running', `${podName} Running`);
    // TestKubeconfig.ReadFileViaContainer: `kubectl exec … -- cat <file>` (kubectl 1.32 wants the `--`), its stdout as is
    const admin = join(env.ts().dataDir, 'admin.kubeconfig');
    const read = async (file: string): Promise<string> => {
      const r = await runKubectl(admin, ['exec', podName, `--namespace=${n}`, '-c', 'test', '--', 'cat', `${TOKEN_DIR}/${file}`]);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    const [mountedToken, mountedCA, mountedNamespace] = [await read('token'), await read('ca.crt'), await read('namespace')];
    const rootCA = await env.get(`/api/v1/namespaces/${n}/configmaps/kube-root-ca.crt`);
    expect(mountedCA).toBe(rootCA.data['ca.crt']);
    expect(mountedNamespace).toBe(n);
    const review = await env.call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: mountedToken } });
    expect(review.status.authenticated).toBe(true);
    expect(review.status.error ?? '').toBe('');
    expect(review.status.user.username).toBe(`system:serviceaccount:${n}:mount-test`);
    expect(review.status.user.groups).toEqual(expect.arrayContaining(['system:authenticated', 'system:serviceaccounts', `system:serviceaccounts:${n}`]));
  });

  it('should mount projected service account token [Conformance]', async () => {
    const n = await namespace(env, `svcaccounts-${Math.random().toString(36).slice(2, 8)}`);
    const tokenPath = '/test-volume/token';
    // e2epod.NewAgnhostPod with `mounttest --file_content=/test-volume/token` (printed by the shell, see e2e-node-mounttest.ts)
    const pod = {
      metadata: { name: uniqueName('test-pod-') },
      spec: {
        restartPolicy: 'Never',
        volumes: [{ name: 'test-volume', projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 60 * 60 } }] } }],
        containers: [{ name: 'agnhost-container', image: AGNHOST, command: mounttest({ content: [tokenPath] }), volumeMounts: [{ name: 'test-volume', mountPath: '/test-volume', readOnly: true }] }],
      },
    };
    await testContainerOutput(env, n, pod, 0, [new RegExp(`content of file "${tokenPath}": [A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*`)]);
  });
});
