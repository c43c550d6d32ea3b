// Where a process's CPU goes, from a `perf record -g` of it: each sample is
// put in one bucket (TLS, syscalls on the client's TCP socket or the
// channel's unix socket, nghttp2, Node's http2 C++ and JS, Node's streams,
// our code, GC, the JIT compiler, malloc), found from the sample's stack. A
// JavaScript frame's bucket is its file's; native code under it (builtins,
// inlined Node functions) counts with it. Used for docs/performance.md "TLS
// workers: where a create's CPU goes".
//
//   ORCH_TLS_WORKER_NODE_ARGS=--perf-basic-prof-only-functions … bench/raft-write.ts … &
//   perf record -F 7999 -g -o w.data -p <worker pid>
//   npx tsx bench/perf-split.ts w.data <worker pid> [from-s to-s]   (perf's clock, seconds)

import { execFileSync } from 'node:child_process';

interface Sample {
  tid: number;
  t: number;
  frames: { sym: string; dso: string }[];
}

function readSamples(data: string, pid: string): Sample[] {
  const text = execFileSync('perf', ['script', '-i', data, '--pid', pid, '-F', 'tid,time,ip,sym,dso'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const out: Sample[] = [];
  let cur: Sample | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (cur) out.push(cur);
      cur = undefined;
    } else if (!line.startsWith('\t')) {
      const m = /^\s*(\d+)\s+([\d.]+):/.exec(line);
      if (m) cur = { tid: Number(m[1]), t: Number(m[2]), frames: [] };
    } else if (cur) {
      const m = /^\s*\S+\s+(.*) \((.*)\)$/.exec(line);
      if (m) cur.frames.push({ sym: m[1]!, dso: m[2]! });
    }
  }
  if (cur) out.push(cur);
  return out;
}

const jit = (dso: string): boolean => dso.startsWith('[JIT]') || dso.includes('/perf-');
const OPENSSL = /(^|[^a-z])(SSL_|ssl3_|ssl_|tls1_|tls13|tls_|EVP_|aesni|gcm|ossl_|CRYPTO_|BIO_|sha\d|SHA\d|RAND_|OPENSSL|aes_)/;
const GC = ['Scavenger', 'Heap::Collect', 'MarkCompact', 'Sweeper', 'ScavengerCollector', 'Heap::PerformGarbage', 'IncrementalMarking', 'Heap::Finalize'];
const NODE_STREAMS = /^node:(internal\/streams|internal\/stream_base_commons|events|internal\/process\/task_queues|internal\/timers|timers|internal\/process\/promises|net|buffer|internal\/buffer)\b/;

function jsBucket(sym: string): string {
  const m = /(file:\/\/\S+|node:\S+)/.exec(sym);
  const where = m?.[1] ?? '';
  if (where.startsWith('file:')) return where.includes('/node_modules/') ? 'JS: dependencies' : 'JS: our code';
  if (where.startsWith('node:internal/http2')) return 'JS: Node http2';
  if (NODE_STREAMS.test(where)) return 'JS: Node streams, events, nextTick, buffers';
  return 'JS: other Node';
}

function bucket(s: Sample, mainTid: number): string {
  const syms = s.frames.map((f) => f.sym);
  const all = syms.join(' ');
  if (s.tid !== mainTid) {
    if (/compiler|Compil/.test(all)) return 'V8 compiler (its thread)';
    if (/Scaveng|Heap|Mark|Sweep|GC|Concurrent/.test(all)) return 'GC (helper threads)';
    return 'other threads';
  }
  if (GC.some((k) => all.includes(k))) return 'GC (main thread)';
  if (/compiler::|Compiler::|Deoptimizer/.test(all)) return 'V8 compiler (main thread)';
  if (s.frames[0]?.dso === '[kernel.kallsyms]') {
    const kind = all.includes('tcp_') ? 'client TCP socket' : all.includes('unix_') ? 'channel unix socket' : all.includes('epoll') ? 'epoll' : '';
    return kind ? `kernel: ${kind}` : 'kernel: other (scheduling, page faults, interrupts)';
  }
  for (const f of s.frames) {
    if (jit(f.dso)) return jsBucket(f.sym);
    if (f.sym.includes('nghttp2_')) return 'nghttp2';
    if (OPENSSL.test(f.sym) || f.sym.includes('TLSWrap')) return 'TLS (OpenSSL, TLSWrap)';
    if (f.sym.includes('node::http2::')) return 'Node http2 C++';
    if (f.sym.includes('uv_')) return 'libuv, Node stream C++';
  }
  return 'native, caller unknown (mostly malloc/free)';
}

const [data, pid, from, to] = process.argv.slice(2);
if (!data || !pid) {
  console.error('usage: perf-split.ts PERF.DATA PID [FROM_S TO_S]');
  process.exit(2);
}
const lo = from ? Number(from) : 0;
const hi = to ? Number(to) : Infinity;
const samples = readSamples(data, pid).filter((s) => s.t >= lo && s.t < hi);
const counts = new Map<string, number>();
for (const s of samples) {
  const b = bucket(s, Number(pid));
  counts.set(b, (counts.get(b) ?? 0) + 1);
}
console.log(`${samples.length} samples`);
for (const [b, n] of [...counts].sort((x, y) => y[1] - x[1])) console.log(`${((100 * n) / samples.length).toFixed(1).padStart(5)} %  ${b}`);
