// Which API domain the control plane serves (`orch.io`, or `k8s.io` for
// unmodified Kubernetes tools): learned from its group discovery (`GET /apis`,
// readable by every authenticated user through system:discovery, spec 001 §5.14)
// when `--api-domain` is not given, so an agent pointed at a `--api-domain k8s.io`
// server does not ask for `coordination.orch.io` leases it can never get.
import { ApiClient } from './api-client.js';
import type { ApiCredentials } from './kubeconfig.js';

export const DEFAULT_API_DOMAIN = 'orch.io';

/** the domain of the served `coordination.<domain>` group, or undefined when the answer names none */
export function domainFromGroups(body: unknown): string | undefined {
  const groups = (body as { groups?: { name?: unknown }[] } | null)?.groups;
  if (!Array.isArray(groups)) return undefined;
  for (const g of groups) {
    if (typeof g.name === 'string' && g.name.startsWith('coordination.') && g.name.length > 'coordination.'.length) {
      return g.name.slice('coordination.'.length);
    }
  }
  return undefined;
}

/** asks the control plane; throws with the reason when it cannot tell */
export async function discoverApiDomain(creds: ApiCredentials, timeoutMs = 5_000): Promise<string> {
  const api = new ApiClient(creds, timeoutMs);
  try {
    const d = domainFromGroups(await api.get<unknown>('/apis'));
    if (!d) throw new Error('GET /apis lists no coordination.<domain> group');
    return d;
  } finally {
    api.close();
  }
}
