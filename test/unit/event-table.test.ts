// The core/v1 Event table as kube 1.32 prints it (printEvent): Last Seen,
// Type, Reason, Object, Message; with -o wide also Subobject, Source
// (`component, host`), First Seen, Count and Name last; no Age column.
import { describe, expect, it } from 'vitest';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import { coreEventDefinition } from '../../src/registry/kinds/event.js';
import { toTable } from '../../src/registry/table.js';

const T0 = Date.parse('2026-11-28T04:00:00Z');

describe('the Event table', () => {
  it("has kube's columns, priorities and cells for a kubelet event counted up", () => {
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'crash.18ec1ac163e5cc4e', namespace: 'default', creationTimestamp: '2026-11-28T03:59:00Z' },
      involvedObject: { kind: 'Pod', name: 'crash', namespace: 'default', fieldPath: 'spec.containers{crash}' },
      reason: 'BackOff',
      message: 'Back-off restarting failed container crash in pod crash_default(u)',
      type: 'Warning',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2026-11-28T03:59:00Z',
      lastTimestamp: '2026-11-28T03:59:50Z',
      count: 4,
    };
    const t = toTable(coreEventDefinition(new SchemaNames('orch.io')), [ev], {}, { group: 'meta.orch.io', version: 'v1', includeObject: 'None', now: T0 }) as {
      columnDefinitions: { name: string; priority: number; type: string }[];
      rows: { cells: unknown[] }[];
    };
    expect(t.columnDefinitions.map((c) => [c.name, c.priority])).toEqual([
      ['Last Seen', 0], ['Type', 0], ['Reason', 0], ['Object', 0], ['Subobject', 1], ['Source', 1], ['Message', 0], ['First Seen', 1], ['Count', 1], ['Name', 1],
    ]);
    expect(t.rows[0]!.cells).toEqual(['10s', 'Warning', 'BackOff', 'pod/crash', 'spec.containers{crash}', 'kubelet, node-1', ev.message, '60s', 4, 'crash.18ec1ac163e5cc4e']);
  });
});
