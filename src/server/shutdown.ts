// A server's graceful shutdown, in order: controllers and the parts that
// follow the store stop, watches end, in-flight requests finish, the audit
// backends flush, then the TLS front and the store close.

import type { Auditor } from '../audit/auditor.js';
import type { Clock } from '../core/clock.js';
import type { RevisionedStore } from '../store/types.js';
import type { WatchService } from '../watch/service.js';
import { closeAudit } from './audit-setup.js';
import type { Gateway } from './gateway-setup.js';

export interface ServerParts {
  controllers: { stop(): void };
  authorization: { stop(): void };
  auth: { stop(): void };
  admissionChain: { stop(): void } | undefined;
  watch: WatchService;
  gateway: Gateway;
  auditor: Auditor | undefined;
  nodeTransport: { close(): void };
  store: RevisionedStore;
  /** how long in-flight requests get */
  timeoutMs: number;
  clock: Clock;
}

export async function shutdownServer(p: ServerParts): Promise<void> {
  p.controllers.stop();
  p.authorization.stop();
  p.auth.stop();
  p.admissionChain?.stop();
  p.watch.close();
  await p.gateway.closeRequests(p.timeoutMs);
  await closeAudit(p.auditor, 5000, p.clock);
  p.nodeTransport.close();
  p.gateway.stopHealthPublishing();
  await p.gateway.closeFront();
  await p.store.close();
}
