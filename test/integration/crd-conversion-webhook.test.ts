// CRD conversion webhooks (spec.conversion.strategy Webhook, docs/crds.md)
// against a real server and a real HTTPS conversion webhook on loopback:
// create in one version and read in the other, a list over mixed stored
// versions converted in one review, a watch in the non-storage version, a
// patch through the non-storage version, the webhook down (clear 500, nothing
// written), malformed answers (kube's messages), a watch ended by a failed
// conversion, and kubectl applying such a CRD.

import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestServer } from '../helpers/server.js';
import { type AdmissionWebhook, useServerWithWebhook } from '../helpers/admission-webhook.js';
import { type ConversionWebhook, type Obj, hostPortVersions, serveConversion } from '../helpers/conversion-webhook.js';
import { CRDS, createCrd } from '../helpers/crds.js';
import { openWatch } from '../helpers/watch-stream.js';
import { eventually } from '../helpers/eventually.js';
import { runKubectl } from '../helpers/kubectl.js';

const GROUP = 'conv.example.com';

let ts: TestServer;
let hook: AdmissionWebhook;
let n = 0;
useServerWithWebhook('orch-convwh-', (s, h) => {
  ts = s;
  hook = h;
});

/** a fresh kind (own plural and webhook path) with the e2e's v1/v2, v1 stored */
async function kind(storage: 'v1' | 'v2' = 'v1'): Promise<{ plural: string; conv: ConversionWebhook; crd: Obj; path: (v: string, name?: string) => string }> {
  const plural = `hostports${++n}`;
  const conv = serveConversion(hook, `/convert-${n}`);
  const crd = {
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      // a listKind of its own, as a CRD may name it: the list messages name it
      names: { plural, kind: `HostPort${n}`, listKind: `HostPort${n}Collection` },
      versions: hostPortVersions(storage),
      conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: hook.url(conv.path), caBundle: hook.caBundle }, conversionReviewVersions: ['v1', 'v1beta1'] } },
    },
  };
  await createCrd(ts, crd);
  const path = (v: string, name?: string) => `/apis/${GROUP}/${v}/namespaces/default/${plural}${name ? `/${name}` : ''}`;
  return { plural, conv, crd, path };
}

function cr(k: { crd: Obj }, version: string, name: string, fields: Obj): Obj {
  return { apiVersion: `${GROUP}/${version}`, kind: k.crd.spec.names.kind, metadata: { name, labels: { app: 'conv' } }, ...fields };
}

describe('conversion webhook', () => {
  it.concurrent('create in v1, read in v2 (converted), read in v1 (no review)', async () => {
    const k = await kind();
    const c = await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'a', { hostPort: 'localhost:8080' }) });
    expect(c.status).toBe(201);
    // stored in v1 = written in v1: no review
    expect(k.conv.reviews).toHaveLength(0);
    const v2 = (await ts.request('GET', k.path('v2', 'a'))).json<Obj>();
    expect(v2).toMatchObject({ apiVersion: `${GROUP}/v2`, host: 'localhost', port: '8080', metadata: { name: 'a', labels: { app: 'conv' } } });
    expect(v2.hostPort).toBeUndefined();
    expect(k.conv.reviews).toHaveLength(1);
    const review = k.conv.reviews[0]!;
    expect(review).toMatchObject({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { desiredAPIVersion: `${GROUP}/v2` } });
    expect(review.request.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(review.request.objects.map((o) => [o.apiVersion, o.hostPort])).toEqual([[`${GROUP}/v1`, 'localhost:8080']]);
    const v1 = (await ts.request('GET', k.path('v1', 'a'))).json<Obj>();
    expect(v1).toMatchObject({ apiVersion: `${GROUP}/v1`, hostPort: 'localhost:8080' });
    expect(k.conv.reviews).toHaveLength(1);
  });

  it.concurrent('create in v2 is stored in v1 (converted) and answered in v2', async () => {
    const k = await kind();
    const c = await ts.request('POST', k.path('v2'), { body: cr(k, 'v2', 'b', { host: 'example.com', port: '443' }) });
    expect(c.status).toBe(201);
    expect(c.json()).toMatchObject({ apiVersion: `${GROUP}/v2`, host: 'example.com', port: '443' });
    const v1 = (await ts.request('GET', k.path('v1', 'b'))).json<Obj>();
    expect(v1).toMatchObject({ apiVersion: `${GROUP}/v1`, hostPort: 'example.com:443' });
    expect(v1.metadata.uid).toBe(c.json<Obj>().metadata.uid);
    // the write's two conversions: to the storage version, and the answer back
    expect(k.conv.reviews.map((r) => r.request.desiredAPIVersion)).toEqual([`${GROUP}/v1`, `${GROUP}/v2`]);
  });

  it.concurrent('a list over mixed stored versions converts in one review', async () => {
    const k = await kind('v1');
    for (const name of ['x1', 'x2', 'x3']) expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', name, { hostPort: `${name}:1` }) })).status).toBe(201);
    // switch the storage version to v2 (kube's alternativeAPIVersions), then write one more
    const crd = (await ts.request('GET', `${CRDS}/${k.plural}.${GROUP}`)).json<Obj>();
    crd.spec.versions = hostPortVersions('v2');
    expect((await ts.request('PUT', `${CRDS}/${k.plural}.${GROUP}`, { body: crd })).status).toBe(200);
    await eventually(async () => {
      const r = await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'y', { hostPort: 'y:2' }) });
      return r.status === 201;
    }, 'a v1 create after the storage switch');
    k.conv.reviews.length = 0;
    const list = (await ts.request('GET', k.path('v2'))).json<Obj>();
    expect(list.items.map((o: Obj) => [o.metadata.name, o.apiVersion, o.host, o.port])).toEqual([
      ['x1', `${GROUP}/v2`, 'x1', '1'],
      ['x2', `${GROUP}/v2`, 'x2', '1'],
      ['x3', `${GROUP}/v2`, 'x3', '1'],
      ['y', `${GROUP}/v2`, 'y', '2'],
    ]);
    // one review for the list; `y` is stored in v2 already and is not sent
    expect(k.conv.reviews).toHaveLength(1);
    expect(k.conv.reviews[0]!.request.objects.map((o) => o.metadata.name)).toEqual(['x1', 'x2', 'x3']);
    const v1 = (await ts.request('GET', k.path('v1'))).json<Obj>();
    expect(v1.items.map((o: Obj) => [o.apiVersion, o.hostPort])).toEqual([
      [`${GROUP}/v1`, 'x1:1'],
      [`${GROUP}/v1`, 'x2:1'],
      [`${GROUP}/v1`, 'x3:1'],
      [`${GROUP}/v1`, 'y:2'],
    ]);
  });

  it.concurrent('a watch in the non-storage version sees converted events in order', async () => {
    const k = await kind();
    const w = openWatch(ts.server, `${k.path('v2')}?watch=1`);
    try {
      await w.response;
      expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'w', { hostPort: 'a:1' }) })).status).toBe(201);
      expect((await ts.request('PATCH', k.path('v1', 'w'), { body: { hostPort: 'b:2' }, headers: { 'Content-Type': 'application/merge-patch+json' } })).status).toBe(200);
      expect((await ts.request('DELETE', k.path('v1', 'w'))).status).toBe(200);
      const events = await w.waitFor(3);
      expect(events.map((e) => [e.type, e.object.apiVersion, e.object.host, e.object.port])).toEqual([
        ['ADDED', `${GROUP}/v2`, 'a', '1'],
        ['MODIFIED', `${GROUP}/v2`, 'b', '2'],
        ['DELETED', `${GROUP}/v2`, 'b', '2'],
      ]);
    } finally {
      w.close();
    }
  });

  it.concurrent('a patch through the non-storage version is stored converted', async () => {
    const k = await kind();
    expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'p', { hostPort: 'old:80' }) })).status).toBe(201);
    const p = await ts.request('PATCH', k.path('v2', 'p'), { body: { host: 'new' }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(p.status).toBe(200);
    expect(p.json()).toMatchObject({ apiVersion: `${GROUP}/v2`, host: 'new', port: '80' });
    expect((await ts.request('GET', k.path('v1', 'p'))).json()).toMatchObject({ hostPort: 'new:80' });
    // server-side apply through v2 as well
    const a = await ts.request('PATCH', `${k.path('v2', 'p')}?fieldManager=t&force=true`, {
      body: { apiVersion: `${GROUP}/v2`, kind: k.crd.spec.names.kind, metadata: { name: 'p' }, port: '81' },
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(a.status).toBe(200);
    expect((await ts.request('GET', k.path('v1', 'p'))).json()).toMatchObject({ hostPort: 'new:81' });
  });

  it.concurrent('the webhook down: a clear 500, and nothing written', async () => {
    const k = await kind();
    expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'kept', { hostPort: 'k:1' }) })).status).toBe(201);
    const dry = await ts.request('POST', `${k.path('v2')}?dryRun=All`, { body: cr(k, 'v2', 'dry', { host: 'd', port: '2' }) });
    expect(dry.status).toBe(201);
    expect(dry.json()).toMatchObject({ apiVersion: `${GROUP}/v2`, host: 'd', port: '2' });
    k.conv.down = true;
    // a dry run converts too (kube's dry-run storage round-trips the object)
    expect((await ts.request('POST', `${k.path('v2')}?dryRun=All`, { body: cr(k, 'v2', 'dry', { host: 'd', port: '2' }) })).status).toBe(500);
    const c = await ts.request('POST', k.path('v2'), { body: cr(k, 'v2', 'lost', { host: 'h', port: '1' }) });
    expect(c.status).toBe(500);
    expect(c.json()).toMatchObject({ reason: 'InternalError', code: 500 });
    expect(c.json<Obj>().message).toMatch(new RegExp(`^Internal error occurred: conversion webhook for ${GROUP}/v2, Kind=HostPort\\d+ failed: Post "https://127.0.0.1:\\d+/convert-\\d+\\?timeout=30s": `));
    const g = await ts.request('GET', k.path('v2', 'kept'));
    expect(g.status).toBe(500);
    expect(g.json<Obj>().message).toMatch(new RegExp(`^conversion webhook for ${GROUP}/v1, Kind=HostPort\\d+ failed: `));
    const u = await ts.request('PATCH', k.path('v2', 'kept'), { body: { port: '2' }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(u.status).toBe(500);
    k.conv.down = false;
    const v1 = (await ts.request('GET', k.path('v1'))).json<Obj>();
    expect(v1.items.map((o: Obj) => [o.metadata.name, o.hostPort])).toEqual([['kept', 'k:1']]);
  });

  it.concurrent('malformed answers are refused with kube\'s messages', async () => {
    const k = await kind();
    expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'm', { hostPort: 'm:1' }) })).status).toBe(201);
    const gvk = `${GROUP}/v1, Kind=${k.crd.spec.names.kind}`;
    const cases: [string, ConversionWebhook['answer'], string][] = [
      ['uid', (r, c) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: 'other', result: { status: 'Success' }, convertedObjects: c } }),
        `conversion webhook for ${gvk} failed: expected response.uid="${'UID'}", got "other"`],
      ['failure', (r) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Failure', message: 'cannot convert m' } } }),
        `conversion webhook for ${gvk} failed: cannot convert m`],
      ['count', (r, c) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: [...c, ...c] } }),
        `conversion webhook for ${gvk} returned 2 objects, expected 1`],
      ['version', (r, c) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: c.map((o) => ({ ...o, apiVersion: `${GROUP}/v1` })) } }),
        `conversion webhook for ${gvk} returned invalid object at index 0: invalid groupVersion (expected ${GROUP}/v2, received ${GROUP}/v1)`],
      ['name', (r, c) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: c.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'other' } })) } }),
        `conversion webhook for ${gvk} returned invalid object: must have the same name: m != other`],
      ['kind', (r) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'AdmissionReview', response: { uid: r.request.uid } }),
        `conversion webhook for ${gvk} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1, Kind=AdmissionReview`],
    ];
    for (const [what, answer, message] of cases) {
      k.conv.answer = answer;
      const r = await ts.request('GET', k.path('v2', 'm'));
      expect(r.status, what).toBe(500);
      const uid = k.conv.reviews[k.conv.reviews.length - 1]!.request.uid;
      expect(r.json<Obj>().message, what).toBe(message.replace('UID', uid));
    }
    // a list names the list kind and the object's place in it
    k.conv.answer = (r, c) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: c.map((o) => ({ ...o, kind: 'Other' })) } });
    const list = await ts.request('GET', k.path('v2'));
    expect(list.status).toBe(500);
    expect(list.json<Obj>().message).toBe(`conversion webhook for ${gvk}Collection returned invalid converted object at index 1: invalid kind (expected ${k.crd.spec.names.kind}, received Other)`);
    // labels and annotations may change; other metadata is restored from the original
    k.conv.answer = (r, c) => ({
      apiVersion: r.apiVersion, kind: 'ConversionReview',
      response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: c.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { added: 'yes' }, generation: 99 } })) },
    });
    const ok = (await ts.request('GET', k.path('v2', 'm'))).json<Obj>();
    expect(ok.metadata.labels).toEqual({ added: 'yes' });
    expect(ok.metadata.generation).toBe(1);
    k.conv.answer = (r, c) => ({
      apiVersion: r.apiVersion, kind: 'ConversionReview',
      response: { uid: r.request.uid, result: { status: 'Success' }, convertedObjects: c.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bad key!': 'x' } } })) },
    });
    const bad = await ts.request('GET', k.path('v2', 'm'));
    expect(bad.status).toBe(500);
    expect(bad.json<Obj>().message).toMatch(new RegExp(`^conversion webhook for ${GROUP}/v1, Kind=HostPort\\d+ returned invalid metadata: metadata.labels: Invalid value: "bad key!": `));
    k.conv.answer = undefined;
  });

  it.concurrent('a failed conversion ends a watch with an ERROR event', async () => {
    const k = await kind();
    const w = openWatch(ts.server, `${k.path('v2')}?watch=1`);
    try {
      await w.response;
      expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'ok', { hostPort: 'a:1' }) })).status).toBe(201);
      await w.waitFor(1);
      k.conv.answer = (r) => ({ apiVersion: r.apiVersion, kind: 'ConversionReview', response: { uid: r.request.uid, result: { status: 'Failure', message: 'no more' } } });
      expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'bad', { hostPort: 'b:1' }) })).status).toBe(201);
      const events = await w.waitFor(2);
      expect(events[1]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 500 } });
      expect(events[1]!.object.message).toContain('failed: no more');
      expect(await w.ended).toBe(true);
    } finally {
      w.close();
    }
  });

  it.concurrent('v1beta1 reviews when the CRD names v1beta1 first', async () => {
    const k = await kind();
    const crd = (await ts.request('GET', `${CRDS}/${k.plural}.${GROUP}`)).json<Obj>();
    crd.spec.conversion.webhook.conversionReviewVersions = ['v1beta1', 'v1'];
    expect((await ts.request('PUT', `${CRDS}/${k.plural}.${GROUP}`, { body: crd })).status).toBe(200);
    expect((await ts.request('POST', k.path('v1'), { body: cr(k, 'v1', 'b1', { hostPort: 'a:1' }) })).status).toBe(201);
    await eventually(async () => (await ts.request('GET', k.path('v2', 'b1'))).json<Obj>().host === 'a', 'read through v1beta1');
    expect(k.conv.reviews[k.conv.reviews.length - 1]!.apiVersion).toBe('apiextensions.k8s.io/v1beta1');
  });
});

describe('conversion webhook with kubectl', () => {
  it.concurrent('kubectl applies a CRD with a conversion webhook and reads an object in both versions', async () => {
    const plural = `kubectlports${++n}`;
    const conv = serveConversion(hook, `/convert-${n}`);
    const crd = {
      apiVersion: 'apiextensions.orch.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${plural}.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural, kind: `KubectlPort${n}` },
        versions: hostPortVersions('v1'),
        conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: hook.url(conv.path), caBundle: hook.caBundle }, conversionReviewVersions: ['v1'] } },
      },
    };
    const kubectl = (...args: string[]) => runKubectl(ts.server.kubeconfigPath, args);
    const file = join(ts.dataDir, `${plural}.json`);
    await writeFile(file, JSON.stringify(crd));
    const applied = await kubectl('apply', '-f', file);
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain(`customresourcedefinition.apiextensions.orch.io/${plural}.${GROUP} created`);
    const obj = join(ts.dataDir, `${plural}-obj.json`);
    await writeFile(obj, JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: `KubectlPort${n}`, metadata: { name: 'k', namespace: 'default' }, hostPort: 'kube:6443' }));
    await eventually(async () => (await kubectl('apply', '-f', obj)).code === 0, 'the object applied');
    const v2 = await kubectl('get', `${plural}.v2.${GROUP}`, 'k', '-o', 'jsonpath={.apiVersion} {.host} {.port}');
    expect(v2.stdout).toBe(`${GROUP}/v2 kube 6443`);
    const v1 = await kubectl('get', `${plural}.v1.${GROUP}`, 'k', '-o', 'jsonpath={.hostPort}');
    expect(v1.stdout).toBe('kube:6443');
  });
});

describe('conversion webhook configuration (422)', () => {
  const base = (conversion: Obj, extra: Obj = {}): Obj => ({
    metadata: { name: `bad${++n}.${GROUP}` },
    spec: { group: GROUP, scope: 'Namespaced', names: { plural: `bad${n}`, kind: `Bad${n}` }, versions: hostPortVersions('v1'), conversion, ...extra },
  });
  const causes = (b: Obj): string[] => (b.details?.causes ?? []).map((c: Obj) => `${c.field}: ${c.message}`);

  it.concurrent('kube\'s paths and words', async () => {
    const noHook = await ts.request('POST', CRDS, { body: base({ strategy: 'Webhook' }) });
    expect(noHook.status).toBe(422);
    expect(causes(noHook.json())).toEqual([
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
    const both = await ts.request('POST', CRDS, {
      body: base({ strategy: 'Webhook', webhook: { clientConfig: { url: 'https://a.example/x', service: { namespace: 'n', name: 's' } }, conversionReviewVersions: ['v3'] } }),
    });
    expect(both.status).toBe(422);
    expect(causes(both.json())).toEqual([
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v3"}: must include at least one of v1, v1beta1',
    ]);
    const none = await ts.request('POST', CRDS, { body: base({ strategy: 'None', webhook: { clientConfig: { url: 'https://a.example/x' }, conversionReviewVersions: ['v1'] } }) });
    expect(causes(none.json())).toEqual([
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
    const http = await ts.request('POST', CRDS, { body: base({ strategy: 'Webhook', webhook: { clientConfig: { url: 'http://a.example/x' }, conversionReviewVersions: ['v1', 'v1'] } }) });
    expect(causes(http.json())).toEqual([
      'spec.conversion.webhookClientConfig.url: Invalid value: "http://a.example/x": \'https\' is the only allowed URL scheme',
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v1": duplicate version',
    ]);
  });

  it.concurrent('a service reference defaults its port to 443', async () => {
    const r = await ts.request('POST', CRDS, { body: base({ strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'default', name: 'conv' } }, conversionReviewVersions: ['v1'] } }) });
    expect(r.status).toBe(201);
    expect(r.json<Obj>().spec.conversion.webhook.clientConfig.service).toEqual({ namespace: 'default', name: 'conv', port: 443 });
    await ts.request('DELETE', `${CRDS}/${r.json<Obj>().metadata.name}`);
  });
});
