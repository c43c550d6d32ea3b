// `--controllers`: the names `*` turns on are the names the controllers are started under, `orch server --help`
// and the README list every one of them, and a name no controller has is refused (a typo such as
// `--controllers shceduler` once turned every controller off without a word).
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HPA_CONTROLLER } from '../../src/controllers/autoscaling/hpa.js';
import { CRONJOB_CONTROLLER } from '../../src/controllers/batch/cronjob.js';
import { JOB_CONTROLLER } from '../../src/controllers/batch/job.js';
import { TTL_AFTER_FINISHED_CONTROLLER } from '../../src/controllers/batch/ttl-after-finished.js';
import { CSR_APPROVING_CONTROLLER } from '../../src/controllers/certificates/csrapproving.js';
import { CSR_CLEANER_CONTROLLER } from '../../src/controllers/certificates/csrcleaner.js';
import { CSR_SIGNING_CONTROLLER } from '../../src/controllers/certificates/csrsigning.js';
import { DISRUPTION_CONTROLLER } from '../../src/controllers/disruption/controller.js';
import { ENDPOINT_CONTROLLER } from '../../src/controllers/endpoints/endpoints-controller.js';
import { ENDPOINTSLICE_CONTROLLER } from '../../src/controllers/endpoints/endpointslice-controller.js';
import { ENDPOINTSLICE_MIRRORING_CONTROLLER } from '../../src/controllers/endpoints/endpointslice-mirroring.js';
import { RESOURCE_QUOTA_CONTROLLER } from '../../src/controllers/resourcequota/controller.js';
import { SA_TOKEN_CONTROLLER } from '../../src/controllers/sa-token-secrets.js';
import { SCHEDULER_CONTROLLER } from '../../src/controllers/scheduler/scheduler.js';
import { DAEMONSET_CONTROLLER } from '../../src/controllers/sets/daemonset.js';
import { STATEFULSET_CONTROLLER } from '../../src/controllers/sets/statefulset.js';
import { PV_PROTECTION_CONTROLLER, PVC_PROTECTION_CONTROLLER } from '../../src/controllers/volume/protection.js';
import { PERSISTENTVOLUME_BINDER_CONTROLLER } from '../../src/controllers/volume/pv-controller.js';
import { DEPLOYMENT_CONTROLLER } from '../../src/controllers/workloads/deployment.js';
import { REPLICASET_CONTROLLER, REPLICATIONCONTROLLER_CONTROLLER } from '../../src/controllers/workloads/replicaset.js';
import { DEFAULT_CONTROLLERS, ROOT_CA_PUBLISHER, SERVICE_ACCOUNT_CONTROLLER, unknownControllers } from '../../src/server/controllers-flag.js';
import { NODE_LIFECYCLE_CONTROLLER, TAINT_EVICTION_CONTROLLER } from '../../src/server/node-lifecycle-setup.js';

describe('--controllers', () => {
  it('`*` names exactly the controllers that are on by default', () => {
    const started = [
      SERVICE_ACCOUNT_CONTROLLER, ROOT_CA_PUBLISHER, NODE_LIFECYCLE_CONTROLLER, TAINT_EVICTION_CONTROLLER, DISRUPTION_CONTROLLER,
      SCHEDULER_CONTROLLER, DEPLOYMENT_CONTROLLER, REPLICASET_CONTROLLER, REPLICATIONCONTROLLER_CONTROLLER, DAEMONSET_CONTROLLER,
      STATEFULSET_CONTROLLER, JOB_CONTROLLER, CRONJOB_CONTROLLER, TTL_AFTER_FINISHED_CONTROLLER, HPA_CONTROLLER,
      PERSISTENTVOLUME_BINDER_CONTROLLER, PVC_PROTECTION_CONTROLLER, PV_PROTECTION_CONTROLLER, ENDPOINT_CONTROLLER,
      ENDPOINTSLICE_CONTROLLER, ENDPOINTSLICE_MIRRORING_CONTROLLER, RESOURCE_QUOTA_CONTROLLER, CSR_SIGNING_CONTROLLER, CSR_APPROVING_CONTROLLER, CSR_CLEANER_CONTROLLER,
      SA_TOKEN_CONTROLLER,
    ];
    expect([...DEFAULT_CONTROLLERS].sort()).toEqual([...started].sort());
  });

  it('the README\'s flag table lists every default controller', async () => {
    const row = (await readFile(new URL('../../README.md', import.meta.url), 'utf8')).split('\n').find((l) => l.startsWith('| `--controllers`'));
    const onByDefault = /\(on by default: ([^)]*)\)/.exec(row!)![1]!;
    const listed = [...onByDefault.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    expect(listed.sort()).toEqual([...DEFAULT_CONTROLLERS].sort());
  });

  it('refuses names no controller has; `*`, `name` and `-name` of known ones pass', () => {
    expect(unknownControllers(['*', 'tokencleaner', '-scheduler', 'bootstrapsigner'])).toEqual([]);
    expect(unknownControllers(['shceduler', '-nope', '*'])).toEqual(['shceduler', '-nope']);
  });
});
