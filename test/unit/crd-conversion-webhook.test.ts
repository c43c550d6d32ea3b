// CRD conversion webhooks, the pure parts: validation of spec.conversion
// (kube's validateCustomResourceConversion: paths of the internal form and
// kube's words), the checks of a ConversionReview answer and of the converted
// objects (kube's webhookConverter), and the watcher that queues its sends
// behind conversions (order kept per watcher, other watchers not held back).

import { describe, expect, it } from 'vitest';
import { validateCrd } from '../../src/registry/crd/validate.js';
import { ConversionWebhookError, checkConverted, convertedObjects } from '../../src/registry/crd/conversion-webhook.js';
import { ConvertingWatcher } from '../../src/watch/converting-watcher.js';
import { JsonWatchEncoder } from '../../src/watch/encode.js';
import { DispatchMemo } from '../../src/watch/watcher.js';
import type { CacheEvent } from '../../src/watch/cache.js';
import type { ApiObject } from '../../src/registry/types.js';

type Obj = Record<string, any>;

const ctx = { apiDomain: 'orch.io', reservedGroups: () => new Set<string>() };
const schema = { openAPIV3Schema: { type: 'object', properties: { a: { type: 'string' } } } };
const crd = (conversion: Obj, extra: Obj = {}): ApiObject => ({
  metadata: { name: 'things.x.example.com' },
  spec: {
    group: 'x.example.com',
    scope: 'Namespaced',
    names: { plural: 'things', kind: 'Thing', singular: 'thing', listKind: 'ThingList' },
    versions: [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: false, schema }],
    conversion,
    ...extra,
  },
});
const conversionErrors = (c: ApiObject) => validateCrd(c, ctx).filter((e) => e.field.startsWith('spec.conversion')).map((e) => `${e.field}: ${e.message}`);
const hook = (clientConfig: Obj, conversionReviewVersions: unknown = ['v1']) => ({ strategy: 'Webhook', webhook: { clientConfig, conversionReviewVersions } });
const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');

describe('spec.conversion validation', () => {
  it('accepts None and a well-formed Webhook', () => {
    expect(conversionErrors(crd({ strategy: 'None' }))).toEqual([]);
    expect(conversionErrors(crd(hook({ url: 'https://conv.example/convert', caBundle: CA }, ['v1beta1', 'v1'])))).toEqual([]);
    expect(conversionErrors(crd(hook({ service: { namespace: 'ns', name: 'svc', path: '/convert', port: 8443 } })))).toEqual([]);
  });

  it('refuses an unknown strategy with the supported values', () => {
    expect(conversionErrors(crd({ strategy: 'Magic' }))).toEqual(['spec.conversion.strategy: Unsupported value: "Magic": supported values: "None", "Webhook"']);
  });

  it('Webhook needs a client config and review versions (internal paths)', () => {
    expect(conversionErrors(crd({ strategy: 'Webhook' }))).toEqual([
      'spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
    expect(conversionErrors(crd(hook({}, [])))).toEqual([
      'spec.conversion.webhookClientConfig: Required value: exactly one of url or service is required',
      'spec.conversion.conversionReviewVersions: Required value',
    ]);
  });

  it('checks the url and the service as admission webhooks do', () => {
    expect(conversionErrors(crd(hook({ url: 'https://u:p@conv.example/x?q=1' })))).toEqual([
      'spec.conversion.webhookClientConfig.url: Invalid value: "https://u:p@conv.example/x?q=1": user information is not permitted in the URL',
      'spec.conversion.webhookClientConfig.url: Invalid value: "https://u:p@conv.example/x?q=1": query parameters are not permitted in the URL',
    ]);
    expect(conversionErrors(crd(hook({ service: { name: 'svc', path: 'convert', port: 70000 } })))).toEqual([
      'spec.conversion.webhookClientConfig.service.namespace: Required value: service namespace is required',
      'spec.conversion.webhookClientConfig.service.path: Invalid value: "convert": must start with a \'/\'',
      'spec.conversion.webhookClientConfig.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
    ]);
    expect(conversionErrors(crd(hook({ url: 'https://conv.example/x', caBundle: 'bm90IGEgY2VydA==' })))).toEqual([
      'spec.conversion.webhookClientConfig.caBundle: Invalid value: "<bytes>": must be base64 of one or more PEM CERTIFICATE blocks',
    ]);
  });

  it('review versions: duplicates, DNS labels, one the server speaks', () => {
    expect(conversionErrors(crd(hook({ url: 'https://c.example/x' }, ['v3', 'v3', 'V_4'])))).toEqual([
      'spec.conversion.conversionReviewVersions[1]: Invalid value: "v3": duplicate version',
      expect.stringMatching(/^spec\.conversion\.conversionReviewVersions\[2\]: Invalid value: "V_4": a DNS-1035 label must consist of lower case/),
      'spec.conversion.conversionReviewVersions: Invalid value: []string{"v3", "v3", "V_4"}: must include at least one of v1, v1beta1',
    ]);
  });

  it('None carries no webhook; Webhook needs preserveUnknownFields false', () => {
    expect(conversionErrors(crd({ strategy: 'None', webhook: { clientConfig: { url: 'https://c.example/x' }, conversionReviewVersions: ['v1'] } }))).toEqual([
      'spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook',
      'spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook',
    ]);
    expect(conversionErrors(crd(hook({ url: 'https://c.example/x' }), { preserveUnknownFields: true }))).toEqual([
      'spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true',
    ]);
  });
});

describe('ConversionReview answers (kube getConvertedObjectsFromResponse)', () => {
  const gvk = 'x.example.com/v1, Kind=Thing';
  const fails = (answer: unknown, version: string, message: string) => {
    expect(() => convertedObjects(answer, version, 'u1', gvk)).toThrow(new ConversionWebhookError(message));
  };

  it('v1: checks kind, response, uid and result', () => {
    fails({ apiVersion: 'apiextensions.k8s.io/v1beta1', kind: 'ConversionReview', response: {} }, 'v1',
      `conversion webhook for ${gvk} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got apiextensions.k8s.io/v1beta1, Kind=ConversionReview`);
    fails({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' }, 'v1', `conversion webhook for ${gvk} failed: no response provided`);
    fails({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'u2' } }, 'v1', `conversion webhook for ${gvk} failed: expected response.uid="u1", got "u2"`);
    fails({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'u1', result: { status: 'Failure' } } }, 'v1',
      `conversion webhook for ${gvk} failed: response.result.status was 'Failure', not 'Success'`);
    fails({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'u1', result: { status: 'Failure', message: 'nope' } } }, 'v1', `conversion webhook for ${gvk} failed: nope`);
    expect(convertedObjects({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response: { uid: 'u1', result: { status: 'Success' }, convertedObjects: [{ a: 1 }] } }, 'v1', 'u1', gvk)).toEqual([{ a: 1 }]);
  });

  it('v1beta1: no kind or uid check (kube keeps it so for compatibility)', () => {
    expect(convertedObjects({ response: { uid: 'other', result: { status: 'Success' }, convertedObjects: [] } }, 'v1beta1', 'u1', gvk)).toEqual([]);
    fails({ response: { result: {} } }, 'v1beta1', `conversion webhook for ${gvk} failed: response.result.status was '', not 'Success'`);
  });
});

describe('converted objects (kube validateConvertedObject, restoreObjectMeta)', () => {
  const gvk = 'x.example.com/v1, Kind=ThingList';
  const original = (name: string): ApiObject => ({
    apiVersion: 'x.example.com/v1', kind: 'Thing',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7', generation: 2, labels: { a: '1' }, annotations: { n: 'x' } },
    a: 'value',
  });
  const converted = (o: ApiObject, over: Obj = {}): Obj => ({ ...o, apiVersion: 'x.example.com/v2', b: o.a, ...over });

  it('counts, groupVersion, kind, name, namespace and uid', () => {
    const sent = [original('one'), original('two')];
    const check = (c: unknown[]) => () => checkConverted(sent, c, 'x.example.com/v2', gvk, true);
    expect(check([converted(sent[0]!)])).toThrow(`conversion webhook for ${gvk} returned 1 objects, expected 2`);
    expect(check([converted(sent[0]!), converted(sent[1]!, { apiVersion: 'x.example.com/v3' })]))
      .toThrow(`conversion webhook for ${gvk} returned invalid converted object at index 2: invalid groupVersion (expected x.example.com/v2, received x.example.com/v3)`);
    expect(check([converted(sent[0]!, { kind: 'Other' }), converted(sent[1]!)])).toThrow('at index 1: invalid kind (expected Thing, received Other)');
    expect(check([converted(sent[0]!, { metadata: { ...sent[0]!.metadata, namespace: 'elsewhere' } }), converted(sent[1]!)])).toThrow('at index 1: must have the same namespace: ns != elsewhere');
    expect(check([converted(sent[0]!), converted(sent[1]!, { metadata: { ...sent[1]!.metadata, uid: 'x' } })])).toThrow('at index 2: must have the same UID: uid-two != x');
    expect(check(['text', converted(sent[1]!)])).toThrow('at index 0: not an object');
    // one object, not a list: kube's single-object words
    expect(() => checkConverted([sent[0]!], [], 'x.example.com/v2', 'x.example.com/v1, Kind=Thing', false)).toThrow('conversion webhook for x.example.com/v1, Kind=Thing failed, no objects returned');
    expect(() => checkConverted([sent[0]!], [converted(sent[0]!, { metadata: { name: 'y', namespace: 'ns', uid: 'uid-one' } })], 'x.example.com/v2', 'g', false))
      .toThrow('conversion webhook for g returned invalid object: must have the same name: one != y');
  });

  it('keeps the converted labels and annotations, restores the rest of metadata', () => {
    const sent = [original('one')];
    const [out] = checkConverted(sent, [converted(sent[0]!, { metadata: { name: 'one', namespace: 'ns', uid: 'uid-one', generation: 9, labels: { b: '2' } } })], 'x.example.com/v2', gvk, true);
    expect(out).toEqual({
      apiVersion: 'x.example.com/v2', kind: 'Thing', a: 'value', b: 'value',
      // annotations absent from the answer are dropped, as kube's restoreObjectMeta drops them
      metadata: { name: 'one', namespace: 'ns', uid: 'uid-one', resourceVersion: '7', generation: 2, labels: { b: '2' } },
    });
    expect(sent[0]!.metadata!.labels).toEqual({ a: '1' });
  });

  it('refuses bad metadata with kube\'s words', () => {
    const sent = [original('one')];
    const meta = (m: Obj) => () => checkConverted(sent, [converted(sent[0]!, { metadata: { name: 'one', namespace: 'ns', uid: 'uid-one', ...m } })], 'x.example.com/v2', gvk, true);
    expect(meta({ labels: { a: 1 } })).toThrow(`conversion webhook for ${gvk} returned invalid metadata in object at index 1: metadata.labels[a] must be a string, but is number in converted object`);
    expect(meta({ labels: ['x'] })).toThrow('invalid metadata.labels of type array in converted object');
    expect(meta({ labels: { a: 'bad value!' } })).toThrow(/metadata\.labels: Invalid value: "bad value!": a valid label must be/);
    expect(meta({ annotations: { 'bad key!': 'v' } })).toThrow(/metadata\.annotation: Invalid value: "bad key!"/);
    expect(() => checkConverted(sent, [{ apiVersion: 'x.example.com/v2', kind: 'Thing' }], 'x.example.com/v2', gvk, true)).toThrow(/must have the same name: one != $/);
  });
});

describe('ConvertingWatcher', () => {
  const obj = (name: string, rv: number): ApiObject => ({ apiVersion: 'x.example.com/v1', kind: 'Thing', metadata: { name, namespace: 'ns', resourceVersion: String(rv) } });
  const event = (o: ApiObject, rv: number): CacheEvent => ({ revision: rv, time: 0, type: 'ADDED', key: `/k/${o.metadata!.name}`, namespace: 'ns', object: o });

  /** a watcher whose conversions the test settles by hand */
  function watcher(views: Map<ApiObject, ApiObject>) {
    const written: string[] = [];
    const waiting: { objects: readonly ApiObject[]; settle: (ok: boolean) => void }[] = [];
    const w = new ConvertingWatcher(
      {
        namespace: '',
        encoder: new JsonWatchEncoder('x.example.com/v2', 'Thing'),
        view: (stored) => views.get(stored)!,
        sink: { write: (c) => (written.push(String(c)), true), backlog: () => 0, end: () => written.push('END') },
        allowBookmarks: true,
        maxBacklogBytes: 1 << 20,
        onEnd: () => {},
      },
      (objects) => {
        if (objects.every((o) => views.has(o))) return undefined;
        return new Promise<void>((resolve, reject) => waiting.push({ objects, settle: (ok) => {
          if (!ok) return reject(new ConversionWebhookError('conversion webhook for g failed: down'));
          for (const o of objects) views.set(o, { ...o, apiVersion: 'x.example.com/v2' });
          resolve();
        } }));
      },
    );
    w.goLive();
    return { w, written, waiting };
  }
  const names = (written: string[]) => written.map((l) => (l === 'END' ? 'END' : `${JSON.parse(l).type}:${JSON.parse(l).object.metadata?.name ?? JSON.parse(l).object.message}`));
  const flush = () => new Promise((r) => setImmediate(r));

  it('keeps each watcher\'s order; a converted object is sent at once to the next watcher', async () => {
    const views = new Map<ApiObject, ApiObject>();
    const a = obj('a', 1);
    const b = obj('b', 2);
    const first = watcher(views);
    first.w.deliverBatch([event(a, 1)], new DispatchMemo());
    first.w.deliverBatch([event(b, 2)], new DispatchMemo());
    first.w.bookmark(2);
    await flush();
    expect(first.written).toEqual([]);
    expect(first.waiting).toHaveLength(1);
    // `b` converts first (another watcher needed it): `first` still waits for `a`
    views.set(b, { ...b, apiVersion: 'x.example.com/v2' });
    const second = watcher(views);
    second.w.deliverBatch([event(b, 2)], new DispatchMemo());
    expect(names(second.written)).toEqual(['ADDED:b']);
    first.waiting[0]!.settle(true);
    await flush();
    await flush();
    expect(names(first.written)).toEqual(['ADDED:a', 'ADDED:b', 'BOOKMARK:undefined']);
  });

  it('a failed conversion ends the watch with an ERROR event', async () => {
    const { w, written, waiting } = watcher(new Map());
    w.deliverBatch([event(obj('a', 1), 1)], new DispatchMemo());
    await flush();
    waiting[0]!.settle(false);
    await flush();
    // the real preparation rejects with the read Status (servedObjects); anything else is an internal error
    expect(names(written)).toEqual(['ERROR:Internal error occurred: conversion webhook for g failed: down', 'END']);
    expect(w.isEnded).toBe(true);
  });
});
