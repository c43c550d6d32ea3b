// Small request helpers for the ports of Kubernetes' e2e conformance tests
// (test/integration/e2e-*.test.ts): each e2e test runs in a namespace of its
// own, writes with the admin identity and expects a given status code.

import { expect } from 'vitest';
import type { TestServer } from './server.js';

export type Obj = Record<string, any>;

const PATCH_TYPES = { merge: 'application/merge-patch+json', strategic: 'application/strategic-merge-patch+json', json: 'application/json-patch+json' } as const;
export type PatchType = keyof typeof PATCH_TYPES;

export interface Api {
  /** sends `body` and expects `want` (201 for POST, 200 otherwise); returns the decoded answer */
  send(method: string, path: string, body?: object, want?: number): Promise<Obj>;
  patch(path: string, body: object, type?: PatchType, want?: number): Promise<Obj>;
  get(path: string, want?: number): Promise<Obj>;
  /** creates a namespace (its name or a generated one from `prefix-`); returns its name */
  namespace(name: string): Promise<string>;
}

export function api(t: () => TestServer): Api {
  const send = async (method: string, path: string, body?: object, want = method === 'POST' ? 201 : 200): Promise<Obj> => {
    const r = await t().request(method, path, body === undefined ? {} : { body });
    expect(r.status, `${method} ${path}: ${r.text}`).toBe(want);
    return r.text ? r.json<Obj>() : {};
  };
  return {
    send,
    async patch(path, body, type = 'merge', want = 200) {
      const r = await t().request('PATCH', path, { body, headers: { 'Content-Type': PATCH_TYPES[type] } });
      expect(r.status, `PATCH ${path}: ${r.text}`).toBe(want);
      return r.json<Obj>();
    },
    get: (path, want = 200) => send('GET', path, undefined, want),
    async namespace(name) {
      const body = name.endsWith('-') ? { metadata: { generateName: name } } : { metadata: { name } };
      return (await send('POST', '/api/v1/namespaces', body)).metadata.name as string;
    },
  };
}
