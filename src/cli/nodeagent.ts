// `orch nodeagent` and `orch runtime-sim` (docs/nodeagent.md).

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { writeKubeconfig } from '../server/kubeconfig.js';
import { issueClientCertificate, loadPki } from '../server/pki.js';
import { stringify } from 'yaml';
import { startAgent } from '../nodeagent/agent.js';
import { parseNodeIPArgument } from '../nodeagent/node-ip.js';
import { featureEnabled } from '../nodeagent/features.js';
import { loadConfig } from '../nodeagent/config/load.js';
import { ConfigError } from '../nodeagent/config/schema.js';
import { LockHeldError } from '../nodeagent/lock.js';
import { parseFaultsEnv, startRuntimeSim } from '../nodeagent/runtime/sim-server.js';
import { gatedWatchdogPeriodMs, startWatchdog } from '../nodeagent/watchdog.js';
import { DEFAULT_API_DOMAIN, discoverApiDomain } from '../nodeagent/api-domain.js';
import { checkKubeconfigs, KubeconfigError, readKubeconfig } from '../nodeagent/kubeconfig.js';
import { systemClock } from '../nodeagent/clock.js';

interface AgentFlags {
  kubeconfig?: string;
  bootstrapKubeconfig?: string;
  rotateCertificates?: boolean;
  config?: string;
  configDir?: string;
  rootDir: string;
  certDir?: string;
  hostnameOverride?: string;
  lockFile: string;
  nodeIp?: string;
  nodeExternalIp?: string;
  apiDomain?: string;
  printConfig?: boolean;
}

function onSignals(stop: () => Promise<void>, name: string): void {
  let stopping = false;
  const handler = (sig: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${name}: ${sig} received, shutting down\n`);
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}

/** `--api-domain` absent: ask the control plane; standalone or unreachable: the default, said on stderr */
async function learnApiDomain(kubeconfig: string | undefined): Promise<string> {
  if (!kubeconfig) return DEFAULT_API_DOMAIN;
  try {
    return await discoverApiDomain(await readKubeconfig(kubeconfig));
  } catch (e) {
    process.stderr.write(`nodeagent: cannot learn the API domain from the control plane (${(e as Error).message}); using ${DEFAULT_API_DOMAIN} (set --api-domain)\n`);
    return DEFAULT_API_DOMAIN;
  }
}

export function addNodeAgentCommands(program: Command): void {
  program
    .command('nodeagent')
    .description('run the node agent: registers this machine as a Node and runs its pods through a container runtime')
    .option('--kubeconfig <file>', 'how to reach the control plane; absent: standalone (static pods only)')
    .option('--bootstrap-kubeconfig <file>', 'a bootstrap-token kubeconfig: when --kubeconfig is absent or its certificate expired, request a client certificate with it and write --kubeconfig')
    .option('--rotate-certificates', 'request a new client certificate at 70-90% of the current one\'s lifetime')
    .option('--config <file>', 'NodeAgentConfiguration file (nodeagent.config.<domain>/v1beta1)')
    .option('--config-dir <dir>', 'drop-in configuration files (*.conf), merged over --config in lexical order')
    .option('--root-dir <dir>', 'the agent\'s state directory', '/var/lib/nodeagent')
    .option('--cert-dir <dir>', 'certificates and keys (default <root-dir>/pki)')
    .option('--hostname-override <name>', 'the node name and Hostname address instead of the kernel\'s host name')
    .option('--lock-file <file>', 'exclusive lock: a second agent with the same lock file exits', '/var/run/nodeagent.lock')
    .option('--node-ip <ip>', 'the InternalIP address of the node')
    .option('--node-external-ip <ip>', 'the ExternalIP address of the node')
    .option('--api-domain <domain>', 'domain of the API groups and of the configuration apiVersion (default: learned from the control plane\'s /apis, else orch.io)')
    .option('--print-config', 'print the merged configuration (files, drop-ins, defaults) and exit')
    .action(async (f: AgentFlags) => {
      // an unusable kubeconfig is one message, before the API domain is asked for and anything starts
      if (!f.printConfig) {
        try {
          await checkKubeconfigs({ kubeconfig: f.kubeconfig, bootstrapKubeconfig: f.bootstrapKubeconfig, now: systemClock.now() });
        } catch (e) {
          process.stderr.write(`nodeagent: ${(e as Error).message}\n`);
          process.exit(1);
        }
      }
      // before TLS bootstrapping the bootstrap kubeconfig is the one that reaches the control plane
      f.apiDomain ??= await learnApiDomain(f.bootstrapKubeconfig && !(f.kubeconfig && existsSync(f.kubeconfig)) ? f.bootstrapKubeconfig : f.kubeconfig);
      let loaded;
      try {
        loaded = await loadConfig({ configFile: f.config, configDir: f.configDir, domain: f.apiDomain });
      } catch (e) {
        process.stderr.write(`nodeagent: invalid configuration: ${(e as Error).message}\n`);
        process.exit(1);
      }
      if (f.printConfig) {
        process.stdout.write(stringify(loaded.fileForm));
        return;
      }
      let nodeIPs: string[];
      try {
        // kubelet's ParseNodeIPArgument: invalid entries are logged and ignored (auto-detection then)
        nodeIPs = parseNodeIPArgument(f.nodeIp, (m) => process.stderr.write(`nodeagent: ${m}\n`));
      } catch (e) {
        process.stderr.write(`nodeagent: ${(e as Error).message}\n`);
        process.exit(1);
      }
      try {
        // a bad WATCHDOG_USEC is a start-up error (spec 002 §8), found before anything starts;
        // with the SystemdWatchdog gate off it is ignored (kubelet)
        gatedWatchdogPeriodMs(process.env, featureEnabled(loaded.config.featureGates, 'SystemdWatchdog'));
      } catch (e) {
        process.stderr.write(`nodeagent: ${(e as Error).message}\n`);
        process.exit(1);
      }
      try {
        const agent = await startAgent({
          config: loaded.config,
          kubeconfig: f.kubeconfig,
          bootstrapKubeconfig: f.bootstrapKubeconfig,
          rotateCertificates: f.rotateCertificates,
          rootDir: f.rootDir,
          certDir: f.certDir,
          hostnameOverride: f.hostnameOverride,
          nodeIP: nodeIPs[0],
          nodeExternalIP: f.nodeExternalIp,
          lockFile: f.lockFile,
          domain: f.apiDomain,
        });
        const watchdog = startWatchdog({ env: process.env, healthy: agent.healthy, enabled: featureEnabled(loaded.config.featureGates, 'SystemdWatchdog'), log: (m) => process.stderr.write(`nodeagent: ${m}\n`) });
        agent.onReady(() => watchdog.ready());
        process.stdout.write(`nodeagent: node ${agent.nodeName} running; HTTPS on port ${agent.port}; runtime ${agent.runtimeEndpoint}\n`);
        onSignals(async () => {
          watchdog.stop();
          await agent.stop();
        }, 'nodeagent');
      } catch (e) {
        const what = e instanceof LockHeldError || e instanceof KubeconfigError ? '' : e instanceof ConfigError ? 'invalid configuration: ' : 'cannot start: ';
        process.stderr.write(`nodeagent: ${what}${(e as Error).message}\n`);
        process.exit(1);
      }
    });

  // what kubeadm does for a kubelet: a kubeconfig with the node identity (spec 001 §5.15)
  program
    .command('node-kubeconfig')
    .description('write a kubeconfig for a node agent: user system:node:<name>, group system:nodes, signed by the cluster CA')
    .requiredOption('--node-name <name>', 'the node name (the agent\'s --hostname-override)')
    .requiredOption('--out <file>', 'where to write the kubeconfig (mode 0600)')
    .option('--data-dir <dir>', 'the server\'s data dir (its pki/ holds the CA)', './.orch')
    .option('--server <url>', 'the control plane URL (default: the server of <data-dir>/admin.kubeconfig, else https://127.0.0.1:6443)')
    .action(async (f: { nodeName: string; out: string; dataDir: string; server?: string }) => {
      try {
        const server = f.server ?? (await adminServer(f.dataDir));
        const pki = await loadPki(join(f.dataDir, 'pki'));
        const cert = await issueClientCertificate(pki, { commonName: `system:node:${f.nodeName}`, organizations: ['system:nodes'] });
        await writeKubeconfig(f.out, { server, caPem: pki.ca.certPem, clientCertPem: cert.certPem, clientKeyPem: cert.keyPem, user: `system:node:${f.nodeName}` });
        process.stdout.write(`wrote ${f.out} for system:node:${f.nodeName}\n`);
      } catch (e) {
        process.stderr.write(`node-kubeconfig: ${(e as Error).message}\n`);
        process.exit(1);
      }
    });

  program
    .command('runtime-sim')
    .description('serve the simulated container runtime (proto/runtime.proto) on a Unix socket')
    .requiredOption('--socket <path>', 'Unix socket to listen on')
    .action(async (f: { socket: string }) => {
      try {
        const sim = await startRuntimeSim(f.socket, parseFaultsEnv(process.env.ORCH_RUNTIME_SIM_FAULTS));
        process.stdout.write(`runtime-sim: serving on unix://${sim.socket}\n`);
        onSignals(() => sim.stop(), 'runtime-sim');
      } catch (e) {
        process.stderr.write(`runtime-sim: cannot start: ${(e as Error).message}\n`);
        process.exit(1);
      }
    });
}

/** the URL `orch server` wrote into its admin kubeconfig (it knows its --secure-port and address) */
async function adminServer(dataDir: string): Promise<string> {
  const path = join(dataDir, 'admin.kubeconfig');
  if (!existsSync(path)) return 'https://127.0.0.1:6443';
  return (await readKubeconfig(path)).server;
}
