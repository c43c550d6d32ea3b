// Discovery of aggregated groups (src/server/aggregator/discovery.ts,
// apiservice-index.ts): Available versions only, ordered by the APIServices'
// priorities, each version's resources as the server lists them, fetched
// when it becomes Available and again on the clock.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { AggregatedApiIndex } from '../../src/server/aggregator/apiservice-index.js';
import { AggregatedDiscovery } from '../../src/server/aggregator/discovery.js';
import type { ApiObject } from '../../src/registry/types.js';
import { eventually } from '../helpers/eventually.js';

const apiService = (version: string, versionPriority: number, available: boolean): ApiObject => ({
  apiVersion: 'apiregistration.orch.io/v1', kind: 'APIService', metadata: { name: `${version}.wardle.example.com` },
  spec: { group: 'wardle.example.com', version, service: { namespace: 'w', name: 'api', port: 443 }, groupPriorityMinimum: 2000, versionPriority },
  status: { conditions: [{ type: 'Available', status: available ? 'True' : 'False' }] },
}) as ApiObject;

const list = (...names: string[]) => JSON.stringify({ kind: 'APIResourceList', resources: names.map((n) => ({ name: n, singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get'] })) });

describe('aggregated discovery', () => {
  it('lists Available versions by versionPriority with the resources the server lists, fetched again on the clock', async () => {
    const clock = new ManualClock(0);
    const index = new AggregatedApiIndex();
    let served = list('flunders');
    const fetched: string[] = [];
    const d = new AggregatedDiscovery(index, {
      discovery: async (v) => {
        fetched.push(v.version);
        return served;
      },
    }, clock);
    index.put('a', apiService('v1alpha1', 10, true));
    index.put('b', apiService('v1', 20, true));
    index.put('c', apiService('v2', 30, false));
    expect(d.groups()).toEqual([{ name: 'wardle.example.com', versions: [{ groupVersion: 'wardle.example.com/v1', version: 'v1' }, { groupVersion: 'wardle.example.com/v1alpha1', version: 'v1alpha1' }], preferredVersion: { groupVersion: 'wardle.example.com/v1', version: 'v1' } }]);
    const resources = (version: string) => (d.discoveryItems()[0] as { versions: { version: string; freshness: string; resources: { resource: string }[] }[] }).versions.find((v) => v.version === version);
    await eventually(() => resources('v1')?.freshness === 'Current' && resources('v1alpha1')?.freshness === 'Current', 'both fetched');
    expect(resources('v1')!.resources.map((r) => r.resource)).toEqual(['flunders']);
    expect(resources('v2')).toBeUndefined();
    expect(fetched.sort()).toEqual(['v1', 'v1alpha1']);
    served = list('flunders', 'fischers');
    clock.advance(60_000);
    await eventually(() => resources('v1')?.resources.length === 2, 'the new resource');
    d.stop();
  });

  it('keeps each Available version\'s OpenAPI v3 document under its path and hash; a 404 is left out quietly, other failures are logged and drop the old one', async () => {
    const clock = new ManualClock(0);
    const index = new AggregatedApiIndex();
    const logs: string[] = [];
    const answers: Record<string, () => string> = {
      v1: () => JSON.stringify({ openapi: '3.0.0', components: { schemas: {} } }),
      v1alpha1: () => {
        throw new Error('failing or missing response from https://x/openapi/v3/apis/wardle.example.com/v1alpha1: bad status from https://x/openapi/v3/apis/wardle.example.com/v1alpha1: 404');
      },
    };
    const d = new AggregatedDiscovery(index, { discovery: async () => list('flunders'), openapiV3: async (v) => answers[v.version]!() }, clock, (m) => logs.push(m));
    index.put('a', apiService('v1alpha1', 10, true));
    index.put('b', apiService('v1', 20, true));
    await eventually(() => d.openapiV3Paths().size === 1, 'v1\'s document');
    const doc = d.openapiV3Paths().get('apis/wardle.example.com/v1')!;
    expect(JSON.parse(doc.json)).toEqual({ openapi: '3.0.0', components: { schemas: {} } });
    expect(doc.hash).toBe(createHash('sha512').update(doc.json).digest('hex').toUpperCase());
    expect(logs).toEqual([]);
    // the server stops serving a JSON object: the old document goes, and that is logged
    answers.v1 = () => '[1]';
    const version = d.version;
    clock.advance(60_000);
    await eventually(() => d.openapiV3Paths().size === 0 && d.version > version + 1, 'the document dropped');
    expect(logs.some((l) => l.includes('v1.wardle.example.com') && l.includes('not a JSON object'))).toBe(true);
    // an unavailable version is not listed even with a document
    answers.v1 = () => '{}';
    clock.advance(60_000);
    await eventually(() => d.openapiV3Paths().size === 1, 'listed again');
    index.put('b', apiService('v1', 20, false));
    expect(d.openapiV3Paths().size).toBe(0);
    d.stop();
  });
});
