// The pod's managed /etc/hosts (src/nodeagent/etc-hosts.ts): kubelet 1.32's
// exact content for a pod IP, two IPs (dual stack), a subdomain's FQDN and
// hostAliases; the host-network file from the node's; when it is mounted.

import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcHosts, HostsFileError, hostNetworkHostsContent, managedHostsContent, mountsHostsFile, podHostnameAndDomain } from '../../src/nodeagent/etc-hosts.js';

const HEAD = [
  '# Kubernetes-managed hosts file.',
  '127.0.0.1\tlocalhost',
  '::1\tlocalhost ip6-localhost ip6-loopback',
  'fe00::0\tip6-localnet',
  'fe00::0\tip6-mcastprefix',
  'fe00::1\tip6-allnodes',
  'fe00::2\tip6-allrouters',
];
const lines = (...l: string[]) => `${l.join('\n')}\n`;

describe('managedHostsContent', () => {
  it('an IPv4 pod: the loopback entries and its IP with its hostname', () => {
    expect(managedHostsContent(['10.88.0.7'], 'web-0', '')).toBe(lines(...HEAD, '10.88.0.7\tweb-0'));
  });

  it('dual stack: one line per pod IP', () => {
    expect(managedHostsContent(['10.88.0.7', 'fd00::7'], 'web-0', '')).toBe(lines(...HEAD, '10.88.0.7\tweb-0', 'fd00::7\tweb-0'));
  });

  it('a subdomain: the FQDN first, then the short name', () => {
    const { hostname, domain } = podHostnameAndDomain({ metadata: { name: 'p', namespace: 'ns1' }, spec: { hostname: 'web-0', subdomain: 'web' } }, 'cluster.local');
    expect(managedHostsContent(['10.88.0.7', 'fd00::7'], hostname, domain)).toBe(
      lines(...HEAD, '10.88.0.7\tweb-0.web.ns1.svc.cluster.local\tweb-0', 'fd00::7\tweb-0.web.ns1.svc.cluster.local\tweb-0'),
    );
  });

  it('hostAliases: an empty line, the comment, one line per IP with its hostnames tab-separated', () => {
    const aliases = [{ ip: '123.45.67.89', hostnames: ['foo', 'bar'] }, { ip: '::2', hostnames: ['baz'] }];
    expect(managedHostsContent(['10.88.0.7'], 'p', '', aliases)).toBe(
      lines(...HEAD, '10.88.0.7\tp', '', '# Entries added by HostAliases.', '123.45.67.89\tfoo\tbar', '::2\tbaz'),
    );
  });

  it('no IP: no pod line (kubelet then mounts nothing)', () => {
    expect(managedHostsContent([], 'p', '')).toBe(lines(...HEAD));
  });
});

describe('podHostnameAndDomain', () => {
  it("the pod's name without spec.hostname; cut to 63 characters without a trailing - or .", () => {
    expect(podHostnameAndDomain({ metadata: { name: 'plain' }, spec: {} }, 'cluster.local')).toEqual({ hostname: 'plain', domain: '' });
    const long = `${'a'.repeat(61)}-.b`;
    expect(podHostnameAndDomain({ metadata: { name: long }, spec: {} }, 'c').hostname).toBe('a'.repeat(61));
    expect(podHostnameAndDomain({ metadata: { name: 'p' }, spec: { subdomain: 's' } }, 'example.org').domain).toBe('s.default.svc.example.org');
  });
});

describe('hostNetworkHostsContent', () => {
  it("the node's file under its own header, then the aliases", () => {
    expect(hostNetworkHostsContent('127.0.0.1 localhost\n')).toBe('# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n');
    expect(hostNetworkHostsContent('127.0.0.1 localhost\n', [{ ip: '1.2.3.4', hostnames: ['a'] }])).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n\n# Entries added by HostAliases.\n1.2.3.4\ta\n',
    );
  });
});

describe('mountsHostsFile', () => {
  const pod = { metadata: { name: 'p' }, spec: {} };
  it('needs a pod IP, or the host network; never over a mount of /etc/hosts', () => {
    expect(mountsHostsFile(pod, ['10.88.0.7'], {})).toBe(true);
    expect(mountsHostsFile(pod, [], {})).toBe(false);
    expect(mountsHostsFile({ ...pod, spec: { hostNetwork: true } }, [], {})).toBe(true);
    expect(mountsHostsFile(pod, ['10.88.0.7'], { volumeMounts: [{ mountPath: '/etc/hosts-original' }] })).toBe(true);
    expect(mountsHostsFile(pod, ['10.88.0.7'], { volumeMounts: [{ mountPath: '/etc/hosts' }] })).toBe(false);
  });
});

describe('EtcHosts', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'orch-etc-hosts-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes <root>/pods/<uid>/etc-hosts (0644) and mounts it read-write at /etc/hosts", async () => {
    const hosts = new EtcHosts({ rootDir: dir, clusterDomain: 'cluster.local' });
    const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { subdomain: 'sub', hostAliases: [{ ip: '1.2.3.4', hostnames: ['x', 'y'] }] } };
    const mounts = await hosts.mount(pod, ['10.88.0.9'], {});
    expect(mounts).toEqual([{ containerPath: '/etc/hosts', hostPath: join(dir, 'pods', 'u1', 'etc-hosts') }]);
    expect(await readFile(mounts[0]!.hostPath, 'utf8')).toBe(managedHostsContent(['10.88.0.9'], 'p', 'sub.ns.svc.cluster.local', pod.spec.hostAliases));
    expect((await stat(mounts[0]!.hostPath)).mode & 0o777).toBe(0o644);
    expect(await hosts.mount(pod, [], {})).toEqual([]);
    expect(await hosts.mount(pod, ['10.88.0.9'], { volumeMounts: [{ mountPath: '/etc/hosts' }] })).toEqual([]);
  });

  it("a hostNetwork pod's file is the node's; an unreadable one is an error", async () => {
    const nodeHosts = join(dir, 'node-hosts');
    await writeFile(nodeHosts, '127.0.0.1 localhost\n10.0.0.1 node-a\n');
    const hosts = new EtcHosts({ rootDir: dir, clusterDomain: 'cluster.local', nodeHostsFile: nodeHosts });
    const pod = { metadata: { name: 'h', uid: 'u2' }, spec: { hostNetwork: true, hostAliases: [{ ip: '123.45.67.89', hostnames: ['foo', 'bar'] }] } };
    const [m] = await hosts.mount(pod, [], {});
    expect(await readFile(m!.hostPath, 'utf8')).toBe(
      '# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n10.0.0.1 node-a\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n',
    );
    const missing = new EtcHosts({ rootDir: dir, clusterDomain: 'cluster.local', nodeHostsFile: join(dir, 'nope') });
    await expect(missing.mount(pod, [], {})).rejects.toThrow(HostsFileError);
    await expect(missing.mount(pod, [], {})).rejects.toThrow(`open ${join(dir, 'nope')}: no such file or directory`);
  });
});
