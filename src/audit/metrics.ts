// Audit metrics, named as kube-apiserver names them (apiserver_audit_*), plus
// per-backend drop counts and buffer depth that kube does not have
// (docs/audit.md "Metrics").

import client from 'prom-client';
import type { Level } from './types.js';

export type DropReason = 'buffer_full' | 'write_error' | 'webhook_error' | 'shutdown';

export interface AuditMetricsSink {
  event(): void;
  level(level: Level): void;
  /** `plugin` as kube labels apiserver_audit_error_total: buffered (buffer full), log, webhook */
  dropped(backend: string, plugin: string, reason: DropReason, n: number): void;
  bufferDepth(backend: string, read: () => number): void;
}

export class AuditMetrics implements AuditMetricsSink {
  private readonly events: client.Counter;
  private readonly errors: client.Counter<'plugin'>;
  private readonly levels: client.Counter<'level'>;
  private readonly drops: client.Counter<'backend' | 'reason'>;
  private readonly depths = new Map<string, () => number>();

  constructor(registry: client.Registry) {
    const registers = [registry];
    this.events = new client.Counter({ name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.', registers });
    this.errors = new client.Counter({
      name: 'apiserver_audit_error_total',
      help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
      labelNames: ['plugin'],
      registers,
    });
    this.levels = new client.Counter({ name: 'apiserver_audit_level_total', help: 'Counter of policy levels for audit events (1 per request).', labelNames: ['level'], registers });
    this.drops = new client.Counter({
      name: 'orch_audit_dropped_events_total',
      help: 'Audit events not delivered, by backend (log, webhook) and reason (buffer_full, write_error, webhook_error, shutdown).',
      labelNames: ['backend', 'reason'],
      registers,
    });
    const depths = this.depths;
    new client.Gauge({
      name: 'orch_audit_buffered_events',
      help: 'Audit events waiting in a backend\'s buffer.',
      labelNames: ['backend'],
      registers,
      collect() {
        this.reset();
        for (const [backend, read] of depths) this.set({ backend }, read());
      },
    });
  }

  event(): void {
    this.events.inc();
  }

  level(level: Level): void {
    this.levels.inc({ level });
  }

  dropped(backend: string, plugin: string, reason: DropReason, n: number): void {
    if (n <= 0) return;
    this.errors.inc({ plugin }, n);
    this.drops.inc({ backend, reason }, n);
  }

  bufferDepth(backend: string, read: () => number): void {
    this.depths.set(backend, read);
  }
}

export const noAuditMetrics: AuditMetricsSink = {
  event() {},
  level() {},
  dropped() {},
  bufferDepth() {},
};
