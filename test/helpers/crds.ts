// Shared steps of the CRD tests (test/integration/crd-*.test.ts): load the
// fixture manifests, create a CRD over HTTP and wait until it is Established.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { eventually } from './eventually.js';
import type { TestServer } from './server.js';
import type { RunningServer } from '../../src/server/server.js';
import { rawRequest } from './server.js';

export type Obj = Record<string, any>;

export const CRDS = '/apis/apiextensions.orch.io/v1/customresourcedefinitions';
export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'crds');

/** the documents of a fixture file */
export function fixture(file: string): Obj[] {
  return parseAllDocuments(readFileSync(join(FIXTURES, file), 'utf8')).map((d) => d.toJSON() as Obj);
}

/** a copy of the operator CRD with another group/kind, so tests do not collide */
export function operatorCrd(): Obj {
  return structuredClone(fixture('operator.yaml')[0]!);
}

export async function establishedOn(server: RunningServer, name: string): Promise<boolean> {
  const r = await rawRequest(server, 'GET', `${CRDS}/${name}`);
  if (r.status !== 200) return false;
  const conds = (r.json().status as Obj | undefined)?.conditions as Obj[] | undefined;
  return conds?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

/** creates a CRD (201 expected) and waits for Established */
export async function createCrd(t: TestServer, crd: Obj): Promise<Obj> {
  const r = await t.request('POST', CRDS, { body: crd });
  if (r.status !== 201) throw new Error(`creating CRD ${crd.metadata?.name}: ${r.status} ${r.text}`);
  await eventually(() => establishedOn(t.server, crd.metadata.name), `${crd.metadata.name} Established`);
  return r.json();
}

/** a one-version CRD whose objects keep whatever fields they carry (the wire tests' throwaway kinds) */
export function openCrd(o: { group: string; plural: string; kind: string; version?: string; scope?: 'Namespaced' | 'Cluster' }): Obj {
  return {
    apiVersion: 'apiextensions.orch.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${o.plural}.${o.group}` },
    spec: {
      group: o.group,
      scope: o.scope ?? 'Namespaced',
      names: { plural: o.plural, singular: o.kind.toLowerCase(), kind: o.kind },
      versions: [{ name: o.version ?? 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}
