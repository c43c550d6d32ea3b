// Wires the admission chain (src/api/admission/chain.ts) into the server:
// built when the admissionregistration kinds are served (`--runtime-config`
// may turn them off, and then there is nothing to configure), started at
// once so the configuration in the store is in force before the first request.

import { AdmissionChain } from '../api/admission/chain.js';
import type { ServiceResolver } from '../api/admission/webhook-client.js';
import type { Registry } from '../api/registry.js';
import type { RevisionedStore } from '../store/types.js';

export function buildAdmissionChain(
  registry: Registry,
  store: RevisionedStore,
  apiDomain: string,
  log: (msg: string) => void,
  resolver?: ServiceResolver,
): AdmissionChain | undefined {
  const group = `admissionregistration.${apiDomain}`;
  const needed = ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings'];
  const missing = needed.filter((r) => !registry.lookup(group, 'v1', r));
  if (missing.length === needed.length) {
    log(`admission: ${group}/v1 is not served; webhooks and policies are off`);
    return undefined;
  }
  if (missing.length > 0) throw new Error(`--runtime-config: ${group}/v1 must be served whole for admission (missing: ${missing.join(', ')})`);
  const chain = new AdmissionChain({ apiDomain, store, registry, log, resolver });
  chain.start();
  return chain;
}
