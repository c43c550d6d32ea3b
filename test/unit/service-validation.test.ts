// kube 1.32's Service checks on orch's strategy (pkg/apis/core/validation ValidateService, the service REST's
// initIPFamilyFields), SetDefaults_Service's allocateLoadBalancerNodePorts, and the IP checks of Services and Endpoints.

import { describe, expect, it } from 'vitest';
import { nonSpecialIPErrors, parseIP } from '../../src/registry/kinds/ip-address.js';
import { builtinDefinitions } from '../../src/registry/kinds/index.js';
import { clusterIPsErrors, initIPFamilies } from '../../src/registry/kinds/service-ips.js';
import type { ApiObject, JSONValue } from '../../src/registry/types.js';

type Spec = Record<string, JSONValue>;
const msgs = (errs: { field: string; message: string }[]) => errs.map((e) => `${e.field}: ${e.message}`);

describe('IP addresses', () => {
  it('parses as Go with sloppy IPv4, IPv4-mapped IPv6 as IPv4', () => {
    expect(parseIP('010.1.2.3')).toEqual([10, 1, 2, 3]);
    expect(parseIP('::ffff:127.0.0.1')).toEqual([127, 0, 0, 1]);
    expect(parseIP('1.2.3')).toBeUndefined();
    expect(parseIP('fe80::1')?.length).toBe(16);
  });
  it('refuses unspecified, loopback and link-local addresses with kube words', () => {
    expect(msgs(nonSpecialIPErrors('ip', '127.0.0.1'))).toEqual(['ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']);
    expect(msgs(nonSpecialIPErrors('ip', '169.254.1.1'))).toEqual(['ip: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)']);
    expect(msgs(nonSpecialIPErrors('ip', '224.0.0.5'))).toEqual(['ip: Invalid value: "224.0.0.5": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)']);
    expect(msgs(nonSpecialIPErrors('ip', '0.0.0.0'))).toEqual(['ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)']);
    expect(nonSpecialIPErrors('ip', '10.1.2.3')).toEqual([]);
  });
});

describe('Service IP families on an IPv4-only cluster', () => {
  const init = (spec: Spec) => ({ errors: msgs(initIPFamilies(spec)), spec });
  it('defaults SingleStack and IPv4; refuses IPv6 and RequireDualStack', () => {
    expect(init({ selector: { a: 'b' } }).spec).toMatchObject({ ipFamilyPolicy: 'SingleStack', ipFamilies: ['IPv4'] });
    expect(init({ ipFamilies: ['IPv6'] }).errors).toEqual(['spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster']);
    expect(init({ ipFamilyPolicy: 'RequireDualStack' }).errors).toEqual(['spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services']);
    expect(init({ clusterIP: 'fd00::1', clusterIPs: ['fd00::1'] }).errors).toEqual(['spec.clusterIPs[0]: Invalid value: []string{"fd00::1"}: IPv6 is not configured on this cluster']);
  });
  it('a headless Service without selector is RequireDualStack with both families', () => {
    expect(init({ clusterIP: 'None', clusterIPs: ['None'] })).toEqual({ errors: [], spec: expect.objectContaining({ ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] }) });
    expect(init({ clusterIP: 'None', clusterIPs: ['None'], ipFamilyPolicy: 'SingleStack' }).spec.ipFamilies).toEqual(['IPv4']);
  });
  it('checks cluster IPs before allocation (ValidateServiceClusterIPsRelatedFields)', () => {
    expect(msgs(clusterIPsErrors({ clusterIP: 'abc' }))).toEqual(['spec.clusterIPs[0]: Invalid value: "abc": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
    expect(msgs(clusterIPsErrors({ clusterIP: '10.96.0.9', clusterIPs: ['10.96.0.8'] }))).toEqual(['spec.clusterIPs: Invalid value: []string{"10.96.0.8"}: first value must match `clusterIP`']);
    expect(msgs(clusterIPsErrors({ ipFamilies: ['IPv5'] }))).toEqual(['spec.ipFamilies[0]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"']);
    expect(clusterIPsErrors({ clusterIP: 'None' })).toEqual([]);
  });
});

describe('ValidateService: what each type allows', () => {
  const def = builtinDefinitions('k8s.io').find((d) => d.kind === 'Service')!;
  /** the create pipeline without the schema: SetDefaults_Service, then ValidateService */
  const created = (spec: Spec): ApiObject => {
    const o: ApiObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: structuredClone(spec) };
    def.strategy.default?.(o);
    return o;
  };
  const check = (spec: Spec) => msgs(def.strategy.validate!(created(spec)));
  const ports = [{ port: 80 }];

  it('allocateLoadBalancerNodePorts: defaulted true on a LoadBalancer, Forbidden on any other type', () => {
    expect((created({ type: 'LoadBalancer', ports }).spec as Spec).allocateLoadBalancerNodePorts).toBe(true);
    expect((created({ type: 'LoadBalancer', ports, allocateLoadBalancerNodePorts: false }).spec as Spec).allocateLoadBalancerNodePorts).toBe(false);
    expect((created({ type: 'NodePort', ports }).spec as Spec).allocateLoadBalancerNodePorts).toBeUndefined();
    expect(check({ type: 'LoadBalancer', ports, allocateLoadBalancerNodePorts: false })).toEqual([]);
    for (const type of ['ClusterIP', 'NodePort']) {
      expect(check({ type, ports, allocateLoadBalancerNodePorts: false })).toEqual(["spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'"]);
    }
  });

  it('healthCheckNodePort: only on a LoadBalancer with externalTrafficPolicy Local, a port number there', () => {
    expect(check({ type: 'LoadBalancer', ports, externalTrafficPolicy: 'Local', healthCheckNodePort: 30100 })).toEqual([]);
    // the allocator fills it in after validation: a Local LoadBalancer without one is not refused
    expect(check({ type: 'LoadBalancer', ports, externalTrafficPolicy: 'Local' })).toEqual([]);
    const only = "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'";
    expect(check({ type: 'LoadBalancer', ports, healthCheckNodePort: 30100 })).toEqual([`spec.healthCheckNodePort: Invalid value: 30100: ${only}`]);
    expect(check({ type: 'NodePort', ports, externalTrafficPolicy: 'Local', healthCheckNodePort: 30100 })).toEqual([`spec.healthCheckNodePort: Invalid value: 30100: ${only}`]);
    expect(check({ type: 'LoadBalancer', ports, externalTrafficPolicy: 'Local', healthCheckNodePort: 70000 })).toEqual([
      'spec.healthCheckNodePort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
  });

  it('ExternalName: a DNS-1123 subdomain (a trailing dot allowed), no ports needed, no cluster IPs or IP families', () => {
    expect(check({ type: 'ExternalName', externalName: 'db.example.com.', selector: { app: 'x' } })).toEqual([]);
    expect(check({ type: 'ExternalName' })).toEqual(['spec.externalName: Required value']);
    expect(check({ type: 'ExternalName', externalName: '.' })).toEqual(['spec.externalName: Required value']);
    expect(check({ type: 'ExternalName', externalName: 'DB.example.com' })[0]).toMatch(/^spec\.externalName: Invalid value: "DB\.example\.com": a lowercase RFC 1123 subdomain must consist of/);
    const notHere = 'Forbidden: may not be set for ExternalName services';
    // a clusterIP alone counts: kube lines clusterIPs up with it first
    expect(check({ type: 'ExternalName', externalName: 'a.b', clusterIP: '10.96.0.10' })).toEqual([`spec.clusterIPs: ${notHere}`]);
    expect(check({ type: 'ExternalName', externalName: 'a.b', clusterIP: 'None' })).toEqual([`spec.clusterIPs: ${notHere}`]);
    expect(check({ type: 'ExternalName', externalName: 'a.b', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' })).toEqual([`spec.ipFamilies: ${notHere}`, `spec.ipFamilyPolicy: ${notHere}`]);
    // node ports are not its business: kube neither refuses nor allocates them
    expect(check({ type: 'ExternalName', externalName: 'a.b', ports: [{ port: 80, nodePort: 30100 }] })).toEqual([]);
    // nor is internalTrafficPolicy: kube hides it on an ExternalName Service
    expect((created({ type: 'ExternalName', externalName: 'a.b', internalTrafficPolicy: 'Local' }).spec as Spec).internalTrafficPolicy).toBeUndefined();
  });

  it("headless only for ClusterIP: 'None' is refused for NodePort and LoadBalancer", () => {
    expect(check({ clusterIP: 'None' })).toEqual([]);
    expect(check({ type: 'NodePort', ports, clusterIP: 'None' })).toEqual(['spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for NodePort services']);
    expect(check({ type: 'LoadBalancer', ports, clusterIP: 'None', clusterIPs: ['None'] })).toEqual([
      'spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for LoadBalancer services',
    ]);
  });

  it('clusterIPs: lined up with clusterIP, None alone, one per family, valid IPs; families once each', () => {
    expect(check({ ports, clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.11'] })).toEqual(['spec.clusterIPs: Invalid value: []string{"10.96.0.11"}: first value must match `clusterIP`']);
    expect(check({ ports, clusterIPs: ['10.96.0.11'] })).toEqual(['spec.clusterIPs: Invalid value: []string{"10.96.0.11"}: must be empty when `clusterIP` is not specified']);
    expect(check({ ports, clusterIP: 'None', clusterIPs: ['None', '10.96.0.11'] })).toEqual(['spec.clusterIPs: Invalid value: []string{"None", "10.96.0.11"}: \'None\' must be the first and only value']);
    expect(check({ ports, clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10', '10.96.0.11'] })).toEqual([
      'spec.clusterIPs: Invalid value: []string{"10.96.0.10", "10.96.0.11"}: may specify no more than one IP for each IP family',
    ]);
    expect(check({ ports, clusterIP: '10.96.0.300' })).toEqual(['spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
    expect(check({ ports, ipFamilies: ['IPv4', 'IPv4'] })).toEqual(['spec.ipFamilies[1]: Duplicate value: "IPv4"']);
  });

  it('externalIPs: valid, and not special addresses', () => {
    expect(check({ ports, externalIPs: ['192.0.2.10'] })).toEqual([]);
    expect(check({ ports, externalIPs: ['nope', '127.0.0.1'] })).toEqual([
      'spec.externalIPs[0]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'spec.externalIPs[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
  });
});
