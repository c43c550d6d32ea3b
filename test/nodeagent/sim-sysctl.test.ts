// The simulator's `sysctl` (sim-sysctl.ts, docs/nodeagent.md "What the simulator runs"):
// the answer to `sysctl [-n] [-e] name…` from the sandbox's sysctls, else the host's
// /proc/sys; and over a real socket, a container's log and an exec's output
// carrying the values the sandbox was configured with (CRI LinuxPodSandboxConfig.sysctls).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { execArgv, procSysPath, sysctlAnswer } from '../../src/nodeagent/runtime/sim-sysctl.js';
import { useSimSandbox } from '../helpers/sim-sandbox.js';

const host = (files: Record<string, string>) => (p: string) => files[p];

describe('sysctlAnswer', () => {
  it("prints `name = value` with the sandbox's value, slash names in the dotted form", () => {
    const sb = { 'kernel.shm_rmid_forced': '1', 'net.ipv4.conf.eno2/100.rp_filter': '2' };
    expect(sysctlAnswer(['/bin/sysctl', 'kernel.shm_rmid_forced'], sb, host({}))).toEqual({ stdout: 'kernel.shm_rmid_forced = 1\n', stderr: '', code: 0 });
    expect(sysctlAnswer(['sysctl', 'kernel/shm_rmid_forced', 'net/ipv4/conf/eno2.100/rp_filter'], sb, host({}))?.stdout).toBe('kernel.shm_rmid_forced = 1\nnet.ipv4.conf.eno2/100.rp_filter = 2\n');
    expect(sysctlAnswer(['/sbin/sysctl', '-n', 'kernel.shm_rmid_forced'], sb, host({}))?.stdout).toBe('1\n');
  });

  it("falls back to the host's /proc/sys for names the sandbox did not set; an unknown one is an error unless -e", () => {
    const files = host({ '/proc/sys/kernel/ostype': 'Linux', '/proc/sys/net/ipv4/conf/eno2.100/rp_filter': '0' });
    expect(sysctlAnswer(['sysctl', 'kernel.ostype', 'net.ipv4.conf.eno2/100.rp_filter'], {}, files)?.stdout).toBe('kernel.ostype = Linux\nnet.ipv4.conf.eno2/100.rp_filter = 0\n');
    expect(sysctlAnswer(['sysctl', 'no.such', 'kernel.ostype'], {}, files)).toEqual({ stdout: 'kernel.ostype = Linux\n', stderr: 'sysctl: cannot stat /proc/sys/no/such: No such file or directory\n', code: 255 });
    expect(sysctlAnswer(['sysctl', '-e', 'no.such'], {}, files)).toEqual({ stdout: '', stderr: '', code: 0 });
    expect(procSysPath('net.ipv4.conf.eno2/100.rp_filter')).toBe('/proc/sys/net/ipv4/conf/eno2.100/rp_filter');
  });

  it('leaves every other command to the other rules', () => {
    for (const argv of [['sh', '-c', 'sysctl kernel.ostype'], ['sysctl'], ['sysctl', '-a'], ['sysctl', '-w', 'kernel.x=1'], ['sysctl', 'kernel.x=1'], ['mysysctl', 'a'], []]) {
      expect(sysctlAnswer(argv, {}, host({})), argv.join(' ')).toBeUndefined();
    }
    expect(execArgv(['cat', '/etc/hostname'])).toEqual(['cat', '/etc/hostname']);
    expect(execArgv(['sysctl', 'a.b'], { 'a.b': 'x' })[0]).toBe('/bin/sh');
  });
});

describe('a sandbox configured with sysctls', () => {
  const box = useSimSandbox('u-sysctl', undefined, { 'kernel.shm_rmid_forced': '1' });
  const hostValue = readFileSync('/proc/sys/kernel/ostype', 'utf8').trim();

  it("a container's `/bin/sysctl …` logs the sandbox's value and the host's for the rest, and exits 0", async () => {
    const id = await box.rt.createContainer(box.sandbox, { metadata: { name: 'sysctl', attempt: 0 }, image: { image: 'busybox' }, command: ['/bin/sysctl', 'kernel/shm_rmid_forced', 'kernel.ostype'] }, box.sbc);
    await box.rt.startContainer(id);
    for (let i = 0; i < 200 && (await box.rt.containerStatus(id)).state !== 'CONTAINER_EXITED'; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await box.rt.containerStatus(id)).toMatchObject({ state: 'CONTAINER_EXITED', exitCode: 0 });
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve, reject) => box.rt.containerLog({ containerId: id, tailLines: -1 }).on('data', (c: { data: Buffer }) => chunks.push(c.data)).on('end', resolve).on('error', reject));
    expect(Buffer.concat(chunks).toString()).toBe(`kernel.shm_rmid_forced = 1\nkernel.ostype = ${hostValue}\n`);
  });

  it('an exec of `sysctl -n` answers the same', async () => {
    const id = await box.run('sleep 30');
    const r = await box.rt.execSync(id, ['sysctl', '-n', 'kernel.shm_rmid_forced'], 5);
    expect({ out: r.stdout.toString(), code: r.exitCode }).toEqual({ out: '1\n', code: 0 });
    await box.rt.stopContainer(id, 0);
  });
});
