// Kubernetes' sig-storage e2e conformance tests of downwardAPI, configMap and
// secret volumes (test/e2e/common/storage/downwardapi_volume.go,
// configmap_volume.go, secrets_volume.go), on orch with kube's API domain and
// a real node agent on the simulated runtime; the suites are in
// test/helpers/e2e-node-volume-suites.ts (shared with the projected ones).
// Not ported: the [NodeFeature:FSGroup] tests (no fsGroup ownership changes).

import { e2eEnv } from '../helpers/e2e-apps.js';
import { configMapVolumeSuite, downwardApiVolumeSuite, secretVolumeSuite } from '../helpers/e2e-node-volume-suites.js';

const node = 'volumes-node';
const suite = { env: e2eEnv(node, { syncFrequency: '2s' }) /* the update tests wait for the periodic volume refresh (kubelet's default: a minute) */, node, projected: false };
downwardApiVolumeSuite(suite);
configMapVolumeSuite(suite);
secretVolumeSuite(suite);
