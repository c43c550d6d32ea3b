// The simulated sandbox network (docs/nodeagent.md "Probes and the pod
// network"). Simulated pods share the host's network, so a pod's own address
// is a loopback one: every 127.0.0.0/8 address is local on Linux, and a
// process bound to 0.0.0.0 answers on all of them, while an emulated server
// (sim-nginx.ts) binds its sandbox's address only, so two pods can serve the
// same port. The address is derived from the sandbox id (FNV-1a), skipping
// 127.0.0.x (the host's own loopback services) and addresses other live
// sandboxes hold. status.podIP stays the 10.88.0.x address the runtime
// reports in `ip`: the cluster's Services and Endpoints keep a pod network
// that looks like one, and this address is only for the node's own connections.

export const HOST_LOOPBACK = '127.0.0.1';

/** FNV-1a of a string (the simulator's deterministic ids: addresses, image digests, sizes) */
export function fnv(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** 127.1.0.1 … 127.254.255.254 from a number */
function addressOf(n: number): string {
  const b = 1 + (n % 254);
  const c = (n >>> 8) % 256;
  const d = 1 + ((n >>> 16) % 254);
  return `127.${b}.${c}.${d}`;
}

/** the sandbox's loopback address: from its id, the next free one when another live sandbox has it */
export function sandboxLoopback(id: string, taken: ReadonlySet<string>): string {
  let n = fnv(id);
  for (let i = 0; i < 1024; i++, n = (n + 0x9e3779b1) >>> 0) {
    const a = addressOf(n);
    if (!taken.has(a)) return a;
  }
  throw new Error('no free loopback address for the pod sandbox');
}
