#!/usr/bin/env node
// `orch server` with kube-apiserver-style flags (docs/operations.md).

import { Command, InvalidArgumentError } from 'commander';
import { startServer } from '../server/server.js';

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number (0-65535)');
  return n;
}

function domain(v: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/.test(v)) {
    throw new InvalidArgumentError('must be a DNS domain such as orch.io or k8s.io');
  }
  return v;
}

function duration(v: string): number {
  const m = /^(\d+)(ms|s|m|h)?$/.exec(v);
  if (!m) throw new InvalidArgumentError('must be a duration such as 300s, 5m or 1h');
  const mult = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * mult;
}

const program = new Command();
program.name('orch').description('orch: a Kubernetes-style control plane').version('0.1.0');

program
  .command('server')
  .description('run a control-plane member (single-node on the embedded store by default)')
  .option('--secure-port <port>', 'HTTPS port', port, 6443)
  .option('--bind-address <ip>', 'address to listen on', '127.0.0.1')
  .option('--data-dir <dir>', 'where the store, certificates and admin.kubeconfig live', './.orch')
  .option('--api-domain <domain>', 'domain of the API groups (k8s.io lets unmodified Kubernetes clients use every group)', domain, 'orch.io')
  .option('--tls-san <name...>', 'extra DNS names or IPs for the serving certificate')
  .option('--watch-cache-window <duration>', 'watch history kept per resource', duration, 300_000)
  .option('--shutdown-timeout <duration>', 'how long in-flight requests get on SIGTERM', duration, 10_000)
  .action(async (o: { securePort: number; bindAddress: string; dataDir: string; apiDomain: string; tlsSan?: string[]; watchCacheWindow: number; shutdownTimeout: number }) => {
    let server;
    try {
      server = await startServer({
        dataDir: o.dataDir,
        bindAddress: o.bindAddress,
        securePort: o.securePort,
        apiDomain: o.apiDomain,
        tlsSans: o.tlsSan,
        watchWindowMs: o.watchCacheWindow,
        shutdownTimeoutMs: o.shutdownTimeout,
      });
    } catch (e) {
      process.stderr.write(`orch: cannot start: ${(e as Error).message}\n`);
      process.exit(1);
    }
    process.stdout.write(
      `orch is serving on ${server.url}\n` +
        `  kubeconfig: ${server.kubeconfigPath}\n` +
        `  try:        kubectl --kubeconfig ${server.kubeconfigPath} get namespaces\n`,
    );
    let stopping = false;
    const stop = (sig: string) => {
      if (stopping) return;
      stopping = true;
      process.stdout.write(`orch: ${sig} received, shutting down\n`);
      server.shutdown().then(
        () => process.exit(0),
        (e: unknown) => {
          process.stderr.write(`orch: shutdown failed: ${(e as Error).message}\n`);
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`orch: ${(e as Error).message}\n`);
  process.exit(1);
});
