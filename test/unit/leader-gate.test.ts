// The leader gate (src/controllers/leader-gate.ts) against a small leadership
// source: the store contract's `isLeader` / `onLeadershipChange` pair.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SchemaAdmission } from '../../src/registry/admission.js';
import { GenericStore, decodeObject } from '../../src/registry/generic-store.js';
import { builtinDefinitions, sharedDefinitions } from '../../src/registry/kinds/index.js';
import { Registry } from '../../src/registry/registry.js';
import type { ResourceDefinition } from '../../src/registry/types.js';
import { GarbageCollector } from '../../src/controllers/garbage-collector.js';
import { type LeadershipSource, runWhileLeader } from '../../src/controllers/leader-gate.js';
import { NamespaceController } from '../../src/controllers/namespace.js';
import { LocalStore } from '../../src/store/local-store.js';

class FakeLeadership implements LeadershipSource {
  leader = false;
  private readonly listeners = new Set<(leader: boolean) => void>();
  isLeader(): boolean {
    return this.leader;
  }
  onLeadershipChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  set(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    for (const l of [...this.listeners]) l(leader);
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
}

class RecordingController {
  events: string[] = [];
  start(): void {
    this.events.push('start');
  }
  stop(): void {
    this.events.push('stop');
  }
}

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('runWhileLeader', () => {
  it('runs at once when the source has no leadership signal (single node)', () => {
    const c = new RecordingController();
    const gate = runWhileLeader({}, c);
    expect(c.events).toEqual(['start']);
    expect(gate.running).toBe(true);
    gate.stop();
    expect(c.events).toEqual(['start', 'stop']);
    expect(gate.running).toBe(false);
  });

  it('starts on becoming leader, stops on losing it, and starts again', async () => {
    const src = new FakeLeadership();
    const c = new RecordingController();
    const gate = runWhileLeader(src, c);
    expect(c.events).toEqual([]);
    src.set(true);
    await tick();
    expect(c.events).toEqual(['start']);
    expect(gate.running).toBe(true);
    src.set(false);
    // a lost leadership stops synchronously
    expect(c.events).toEqual(['start', 'stop']);
    src.set(true);
    await tick();
    expect(c.events).toEqual(['start', 'stop', 'start']);
    gate.stop();
    expect(c.events).toEqual(['start', 'stop', 'start', 'stop']);
    expect(src.listenerCount).toBe(0);
  });

  it('starts at once when the member already leads', () => {
    const src = new FakeLeadership();
    src.leader = true;
    const c = new RecordingController();
    runWhileLeader(src, c);
    expect(c.events).toEqual(['start']);
  });

  it('does not start after a leadership that flapped away before the start ran', async () => {
    const src = new FakeLeadership();
    const c = new RecordingController();
    const gate = runWhileLeader(src, c);
    src.set(true);
    src.set(false);
    await tick();
    expect(c.events).toEqual([]);
    expect(gate.running).toBe(false);
  });

  it('ignores leadership after the gate is stopped', async () => {
    const src = new FakeLeadership();
    const c = new RecordingController();
    const gate = runWhileLeader(src, c);
    src.set(true);
    gate.stop();
    await tick();
    src.set(false);
    src.set(true);
    await tick();
    expect(c.events).toEqual([]);
  });
});

describe('controllers behind the gate are restartable', () => {
  it('a namespace deletion and an orphan left while not leading are finished after leadership returns', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'orch-gate-'));
    const store = await LocalStore.open(join(dir, 'store'));
    try {
      const defs = sharedDefinitions('orch.io');
      const registry = new Registry('orch.io', defs, builtinDefinitions('orch.io'));
      const admission = new SchemaAdmission(defs);
      const stores = new Map<ResourceDefinition, GenericStore>();
      const storeFor = (def: ResourceDefinition): GenericStore => {
        if (!stores.has(def)) stores.set(def, new GenericStore(def, store, admission));
        return stores.get(def)!;
      };
      const ns = storeFor(registry.lookup('', 'v1', 'namespaces')!);
      const cms = storeFor(registry.lookup('', 'v1', 'configmaps')!);
      const src = new FakeLeadership();
      src.leader = true;
      const gates = [
        runWhileLeader(src, new NamespaceController(store, registry, storeFor)),
        runWhileLeader(src, new GarbageCollector(store, registry, storeFor)),
      ];
      await ns.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'first' } }, { dryRun: false });
      await ns.delete('', 'first', { dryRun: false });
      await until(() => ns.readRaw('', 'first') === undefined);

      src.set(false);
      expect(gates.every((g) => !g.running)).toBe(true);
      await ns.create('', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'second' } }, { dryRun: false });
      await cms.create('second', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'content' } }, { dryRun: false });
      await cms.create(
        'default',
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'orphan', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'gone', uid: 'gone-uid' }] } },
        { dryRun: false },
      );
      await ns.delete('', 'second', { dryRun: false });
      // give stopped controllers every chance to act (they must not)
      for (let i = 0; i < 20; i++) await tick();
      await new Promise((r) => setTimeout(r, 100));
      expect(decodeObject(ns.readRaw('', 'second')!).metadata?.deletionTimestamp).toBeDefined();
      expect(cms.readRaw('second', 'content')).toBeDefined();
      expect(cms.readRaw('default', 'orphan')).toBeDefined();

      src.set(true);
      await until(() => ns.readRaw('', 'second') === undefined && cms.readRaw('default', 'orphan') === undefined);
      expect(cms.readRaw('second', 'content')).toBeUndefined();
      for (const g of gates) g.stop();
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (ok()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not reached');
}
