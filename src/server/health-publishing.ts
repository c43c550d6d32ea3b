// Health answers from the TLS workers (issue #15, src/gateway/health-snapshot.ts):
// the main process publishes its checks' results to the workers every
// 250 ms, and tells them which health paths they may answer to whom, as its
// own authentication and authorization would decide (docs/reliability.md
// "Health under overload").

import type { AuthenticationChain } from '../auth/authn/chain.js';
import type { Authorizer } from '../auth/authz/types.js';
import type { Clock } from '../core/clock.js';
import { authorizationAttributes } from '../endpoints/filters/authz-attributes.js';
import { parseRequestInfo } from '../endpoints/request-info.js';
import type { HealthChecks } from '../gateway/health.js';
import { type HealthPublisher, type ProbeIdentity, startHealthPublisher } from '../gateway/health-snapshot.js';
import type { TlsWorkerPool } from '../gateway/tls-workers.js';

/**
 * Authorizers that never deny: what they allow a user with only the group
 * `system:authenticated` they allow every authenticated user (whose groups
 * include it). A Webhook may deny one user what it allows another, and a
 * custom authorizer is unknown: with either, authenticated probes go to the
 * main process. (AlwaysDeny denies everyone alike, so it is safe too.)
 */
const SAME_FOR_EVERY_USER = new Set(['SystemMasters', 'AlwaysAllow', 'AlwaysDeny', 'RBAC', 'ABAC', 'Node']);

export interface HealthPublishingDeps {
  health: HealthChecks;
  workers: Pick<TlsWorkerPool, 'publishHealth'>;
  authn: Pick<AuthenticationChain, 'authenticate'>;
  authorizer: Authorizer;
  /** the types of the authorizer chain's links; undefined for a custom authorizer */
  authorizerTypes: readonly string[] | undefined;
  /** requests are audited: health requests then stay with the main process, which audits them */
  audited: boolean;
  clock: Clock;
  log: (msg: string) => void;
}

export function publishHealthToWorkers(d: HealthPublishingDeps): HealthPublisher {
  const sameForEveryUser = d.authorizerTypes !== undefined && d.authorizerTypes.every((t) => SAME_FOR_EVERY_USER.has(t));
  const noQuery = new URLSearchParams();
  const mayGet = async (who: ProbeIdentity, path: string): Promise<boolean> => {
    if (d.audited) return false;
    let user;
    if (who === 'anonymous') {
      // the main process's own rule (--anonymous-auth, AuthenticationConfiguration conditions)
      const r = await d.authn.authenticate({ headers: new Map(), peer: undefined, path });
      if (!('user' in r)) return false;
      user = r.user;
    } else {
      if (!sameForEveryUser) return false;
      // no user name: no binding can name it; only the group every authenticated user has
      user = { username: '', groups: ['system:authenticated'] };
    }
    const attrs = authorizationAttributes(user, parseRequestInfo('GET', path, noQuery), path, noQuery);
    return (await d.authorizer.authorize(attrs)).decision === 'allow';
  };
  return startHealthPublisher({ checks: d.health, publish: (s) => d.workers.publishHealth(s), mayGet, clock: d.clock, log: d.log });
}
