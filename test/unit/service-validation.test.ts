// kube 1.32's Service checks on orch's strategy (pkg/apis/core/validation ValidateService, the service REST's
// initIPFamilyFields) and the IP checks of Services and Endpoints.

import { describe, expect, it } from 'vitest';
import { nonSpecialIPErrors, parseIP } from '../../src/registry/kinds/ip-address.js';
import { clusterIPsErrors, initIPFamilies } from '../../src/registry/kinds/service-ips.js';
import type { JSONValue } from '../../src/registry/types.js';

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
