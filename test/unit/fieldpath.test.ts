// FieldsV1 encoding (spec 000 §2.4): decoding and re-encoding real
// Kubernetes-shaped managedFields must give back the same bytes.
import { describe, expect, it } from 'vitest';
import { FieldSet, fieldPE, keyPE, path, pathToString, valuePE, indexPE, parsePathElement, serializePathElement } from '../../src/machinery/apply/fieldpath.js';

// A Deployment created with `kubectl apply` (client-side): an Update entry as the API server writes it.
const DEPLOYMENT_CSA =
  '{"f:metadata":{"f:annotations":{".":{},"f:kubectl.kubernetes.io/last-applied-configuration":{}},"f:labels":{".":{},"f:app":{}}},' +
  '"f:spec":{"f:progressDeadlineSeconds":{},"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},' +
  '"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},' +
  '"f:ports":{".":{},"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},' +
  '"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}';

// A Pod's status as the node agent writes it (map lists keyed by type and ip).
const POD_STATUS =
  '{"f:status":{"f:conditions":{"k:{\\"type\\":\\"ContainersReady\\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},' +
  '"k:{\\"type\\":\\"Initialized\\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},' +
  '"k:{\\"type\\":\\"Ready\\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},' +
  '"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\\"ip\\":\\"10.244.0.5\\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}';

// Finalizers are a set: items named by value.
const FINALIZERS = '{"f:metadata":{"f:finalizers":{".":{},"v:\\"example.com/a\\"":{},"v:\\"example.com/b\\"":{}}}}';

// A server-side applied ConfigMap (Apply entries do not own the data map itself).
const CONFIGMAP_SSA = '{"f:data":{"f:key":{},"f:other":{}},"f:metadata":{"f:labels":{"f:app":{}}}}';

describe('FieldsV1 round trip', () => {
  for (const [name, text] of Object.entries({ DEPLOYMENT_CSA, POD_STATUS, FINALIZERS, CONFIGMAP_SSA })) {
    it(`re-encodes ${name} byte for byte`, () => {
      const set = FieldSet.fromFieldsV1(JSON.parse(text));
      expect(set.toFieldsV1JSON()).toBe(text);
      expect(FieldSet.fromFieldsV1(set.toFieldsV1()).equals(set)).toBe(true);
    });
  }

  it('decodes members, "." markers and children', () => {
    const set = FieldSet.fromFieldsV1(JSON.parse(DEPLOYMENT_CSA));
    const c = keyPE({ name: 'nginx' });
    expect(set.has(path('spec', 'template', 'spec', 'containers', c))).toBe(true);
    expect(set.has(path('spec', 'template', 'spec', 'containers', c, 'image'))).toBe(true);
    expect(set.has(path('spec', 'replicas'))).toBe(true);
    // `f:spec` has no "." — spec itself is not a member, only its fields
    expect(set.has(path('spec'))).toBe(false);
    expect(set.has(path('metadata', 'labels'))).toBe(true);
  });

  it('writes keys in Kubernetes order whatever order they were built in', () => {
    const set = FieldSet.fromPaths([
      path('spec', 'z'),
      path('spec', 'ports', keyPE({ protocol: 'TCP', port: 443 })),
      path('spec', 'ports', keyPE({ port: 80, protocol: 'TCP' })),
      path('spec', 'ports', keyPE({ port: 80, protocol: 'TCP' }), 'port'),
      path('spec', 'a'),
      path('spec', 'tags', valuePE('x')),
      path('spec', 'tags', valuePE(2)),
    ]);
    // numbers compare numerically (80 before 443), numbers before strings, fields before keys
    expect(set.toFieldsV1JSON()).toBe(
      '{"f:spec":{"f:a":{},"f:ports":{"k:{\\"port\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:port":{}},"k:{\\"port\\":443,\\"protocol\\":\\"TCP\\"}":{}},' +
        '"f:tags":{"v:2":{},"v:\\"x\\"":{}},"f:z":{}}}',
    );
  });

  it('escapes HTML characters in keys the way Go does', () => {
    expect(serializePathElement(keyPE({ name: 'a<b>&c' }))).toBe('k:{"name":"a\\u003cb\\u003e\\u0026c"}');
    expect(parsePathElement('k:{"name":"a\\u003cb"}')).toEqual(keyPE({ name: 'a<b' }));
  });

  it('parses every path element kind and rejects unknown ones', () => {
    expect(parsePathElement('f:name')).toEqual(fieldPE('name'));
    expect(parsePathElement('v:1')).toEqual(valuePE(1));
    expect(parsePathElement('i:3')).toEqual(indexPE(3));
    expect(() => parsePathElement('x:1')).toThrow();
    expect(() => parsePathElement('i:-1')).toThrow();
    expect(() => FieldSet.fromFieldsV1({ 'f:a': 1 })).toThrow();
  });
});

describe('path text', () => {
  it('prints paths the way conflict messages show them', () => {
    expect(pathToString(path('spec', 'replicas'))).toBe('.spec.replicas');
    expect(pathToString(path('spec', 'containers', keyPE({ name: 'c' }), 'image'))).toBe('.spec.containers[name="c"].image');
    expect(pathToString(path('spec', 'ports', keyPE({ protocol: 'TCP', containerPort: 80 })))).toBe('.spec.ports[containerPort=80,protocol="TCP"]');
    expect(pathToString(path('metadata', 'finalizers', valuePE('a')))).toBe('.metadata.finalizers[="a"]');
    expect(pathToString(path('spec', 'args', 0))).toBe('.spec.args[0]');
  });
});

describe('set algebra', () => {
  const a = FieldSet.fromPaths([path('a'), path('b', 'c'), path('b', 'd')]);
  const b = FieldSet.fromPaths([path('b', 'c'), path('e')]);

  it('union, intersection, difference and equality', () => {
    expect(a.union(b).paths().map(pathToString)).toEqual(['.a', '.b.c', '.b.d', '.e']);
    expect(a.intersection(b).paths().map(pathToString)).toEqual(['.b.c']);
    expect(a.difference(b).paths().map(pathToString)).toEqual(['.a', '.b.d']);
    expect(a.union(b).equals(b.union(a))).toBe(true);
    expect(a.equals(b)).toBe(false);
    expect(a.difference(a).isEmpty()).toBe(true);
  });

  it('does not modify its operands', () => {
    const before = a.toFieldsV1JSON();
    a.union(b);
    a.difference(b);
    a.intersection(b);
    expect(a.toFieldsV1JSON()).toBe(before);
  });

  it('a member with children is distinct from its children', () => {
    const s = FieldSet.fromPaths([path('x'), path('x', 'y')]);
    expect(s.toFieldsV1JSON()).toBe('{"f:x":{".":{},"f:y":{}}}');
    expect(s.difference(FieldSet.fromPaths([path('x')])).toFieldsV1JSON()).toBe('{"f:x":{"f:y":{}}}');
    expect(s.hasPrefix(path('x'))).toBe(true);
    expect(FieldSet.fromPaths([path('x', 'y')]).withAncestors().has(path('x'))).toBe(true);
  });
});
