// The registry's times come from the composition root's clock (issue #9 item 6,
// src/core/clock.ts): creation and deletion timestamps, continue-token expiry and
// Table ages follow a ManualClock, never the wall clock.

import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { GenericStore } from '../../src/registry/generic-store.js';
import { ContinueTokens } from '../../src/registry/list.js';
import { toTable } from '../../src/registry/table.js';
import { jobDefinition } from '../../src/registry/kinds/batch.js';
import { SchemaNames } from '../../src/machinery/schema/naming.js';
import { StatusError } from '../../src/core/errors.js';
import type { ApiObject } from '../../src/registry/types.js';
import { cleanupDirs, configMaps, openStore } from '../watch/helpers.js';

const T0 = Date.parse('2030-06-01T12:00:00Z');

afterAll(cleanupDirs);

describe('GenericStore on an injected clock', () => {
  it('stamps creationTimestamp and deletionTimestamp from the clock', async () => {
    const clock = new ManualClock(T0);
    const store = await openStore(clock);
    try {
      const gs = new GenericStore(configMaps, store, { admit: () => ({ errors: [], unknownFields: [] }), validateMeta: () => [] }, {}, () => 'Active', clock);
      const { object } = await gs.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', finalizers: ['example.com/hold'] } }, { dryRun: false });
      expect(object.metadata?.creationTimestamp).toBe('2030-06-01T12:00:00Z');
      clock.advance(90_000);
      const { object: deleting, deleted } = await gs.delete('default', 'a', { dryRun: false });
      expect(deleted).toBe(false);
      expect(deleting.metadata?.deletionTimestamp).toBe('2030-06-01T12:01:30Z');
    } finally {
      await store.close();
    }
  });
});

describe('continue tokens on an injected clock', () => {
  it('expire when the clock passes the time to live', () => {
    const clock = new ManualClock(T0);
    const tokens = new ContinueTokens(undefined, 60_000, clock);
    const t = tokens.encode(5, 'k');
    expect(tokens.decode(t).iat).toBe(T0);
    clock.advance(60_001);
    expect(() => tokens.decode(t)).toThrow(StatusError);
  });
});

describe('Table ages from the caller\'s time', () => {
  const job: ApiObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'j', namespace: 'default', creationTimestamp: '2030-06-01T11:00:00Z' },
    spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }] } } },
    status: { startTime: '2030-06-01T11:30:00Z' },
  };
  const cellsAt = (now: number) => {
    const t = toTable(jobDefinition(new SchemaNames('orch.io')), [job], {}, { group: 'meta.orch.io', version: 'v1', includeObject: 'None', now }) as {
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };
    return Object.fromEntries(t.columnDefinitions.map((c, i) => [c.name, t.rows[0]!.cells[i]]));
  };

  it('Age and a running Job\'s Duration count to `now`', () => {
    expect(cellsAt(T0)).toMatchObject({ Age: '60m', Duration: '30m' });
    expect(cellsAt(T0 + 3 * 3_600_000)).toMatchObject({ Age: '4h', Duration: '3h30m' });
  });
});
