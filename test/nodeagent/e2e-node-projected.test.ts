// Kubernetes' sig-storage e2e conformance tests of projected volumes
// (test/e2e/common/storage/projected_downwardapi.go, projected_configmap.go,
// projected_secret.go, projected_combined.go), on orch with kube's API domain
// and a real node agent on the simulated runtime: the plain volume suites of
// test/helpers/e2e-node-volume-suites.ts with each source inside a projected
// volume, and one volume projecting a pod field, a Secret and a ConfigMap.
// Not ported: the [NodeFeature:FSGroup] tests (no fsGroup ownership changes).

import { describe, it } from 'vitest';
import { e2eEnv, namespace } from '../helpers/e2e-apps.js';
import { BUSYBOX, testContainerOutput, uniqueName } from '../helpers/e2e-node-output.js';
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
