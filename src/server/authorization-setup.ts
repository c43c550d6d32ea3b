// Builds the authorizer chain of spec 001 §5.12 from the server's options:
// `--authorization-mode` (default `Node,RBAC`) or `--authorization-config`
// (exclusive), with the privileged group first. server.ts calls this once.
// Each mode's factory lives beside its authorizer in src/auth/authz/.

import { type Clock, systemClock } from '../core/clock.js';
import {
  type AuthorizationMode,
  AlwaysAllowAuthorizer,
  AlwaysDenyAuthorizer,
  AuthorizerChain,
  type ChainEntry,
  type DecisionObserver,
  PrivilegedGroupAuthorizer,
  parseAuthorizationModes,
} from '../auth/authz/chain.js';
import { RbacAuthorizer } from '../auth/authz/rbac/authorizer.js';
import { RbacIndex, followRbacSources } from '../auth/authz/rbac/index.js';
import type { Authorizer, Decision, ObjectSources, RulesResult } from '../auth/authz/types.js';
import { readFileSync } from 'node:fs';
import { loadWebhookKubeconfig } from '../auth/authn/webhook.js';
import { AbacAuthorizer, loadAbacPolicyFile } from '../auth/authz/abac.js';
import { DEFAULT_AUTHORIZED_TTL_MS, DEFAULT_UNAUTHORIZED_TTL_MS, type WebhookConfig, loadAuthorizationConfiguration } from '../auth/authz/config.js';
import type { AuthorizationMetrics } from '../auth/authz/metrics.js';
import { ConfigReloader } from '../auth/authz/reload.js';
import { WebhookAuthorizer } from '../auth/authz/webhook.js';
import { createNodeAuthorization } from '../auth/authz/node/index.js';

/** The authorization flags of `orch server` (spec 001 §5.12–§5.17), all optional. */
export interface AuthorizationOptions {
  /** `--authorization-mode`, a comma list; default `Node,RBAC` */
  mode?: string;
  /** `--authorization-config`: AuthorizationConfiguration file (exclusive with `mode` and `webhook`) */
  configFile?: string;
  /** `--authorization-policy-file` (ABAC, §5.17) */
  policyFile?: string;
  /** `--authorization-webhook-*` (§5.12) */
  webhook?: { configFile: string; authorizedTtlMs?: number; unauthorizedTtlMs?: number; version?: 'v1' | 'v1beta1' };
}

export const DEFAULT_AUTHORIZATION_MODE = 'Node,RBAC';

/** What the authorizers need from the rest of the server; filled in by the modes as they land. */
export interface AuthorizationDeps {
  apiDomain: string;
  log: (msg: string) => void;
  observe?: DecisionObserver;
  /** the objects the RBAC (and Node) authorizers follow (src/server/object-sources.ts) */
  sources?: ObjectSources;
  /** authorization metrics (decisions, webhooks, config reloads); also the decision observer when `observe` is unset */
  metrics?: AuthorizationMetrics;
  /** clock of the webhook caches and the config poll (default the system clock) */
  clock?: Clock;
  /** `--authorization-config` poll interval; default 60 s (§8) */
  configReloadIntervalMs?: number;
  /** feature gate AuthorizeNodeWithSelectors (spec 001 §5.15); default on */
  nodeWithSelectors?: boolean;
}

export interface AuthorizationSetup {
  chain: AuthorizerChain;
  /** the RBAC state, for escalation prevention (one per server, shared by every RBAC link) */
  rbac: RbacIndex;
  /** start watches, reloads and controllers the authorizers need */
  start(): void;
  stop(): void;
  /** re-read `--authorization-config` now (tests; the reloader also watches and polls) */
  reload?(): Promise<void>;
}

type EntryFactory = (name: string) => Promise<ChainEntry>;

export async function buildAuthorization(opts: AuthorizationOptions, deps: AuthorizationDeps): Promise<AuthorizationSetup> {
  if (opts.configFile && (opts.mode !== undefined || opts.webhook || opts.policyFile !== undefined)) {
    const other = opts.mode !== undefined ? '--authorization-mode' : opts.webhook ? webhookFlagGiven(opts.webhook) : '--authorization-policy-file';
    throw new Error(`--authorization-config and ${other} cannot be used together (spec 001 §5.12)`);
  }
  const stoppers: (() => void)[] = [];
  // one RBAC index per server, followed from the store while the server runs
  const rbac = new RbacIndex();
  let unfollow: (() => void) | undefined;
  const rbacEntry: EntryFactory = async (name) => {
    if (!deps.sources) throw new Error('RBAC authorization needs the object sources of the server');
    unfollow ??= followRbacSources(rbac, deps.sources, `rbac.authorization.${deps.apiDomain}`);
    return { type: 'RBAC', name, authorizer: new RbacAuthorizer(rbac, `rbac.authorization.${deps.apiDomain}`) };
  };
  const factories: Record<AuthorizationMode, EntryFactory> = {
    AlwaysAllow: async (name) => ({ type: 'AlwaysAllow', name, authorizer: new AlwaysAllowAuthorizer() }),
    AlwaysDeny: async (name) => ({ type: 'AlwaysDeny', name, authorizer: new AlwaysDenyAuthorizer() }),
    ABAC: async (name) => {
      if (!opts.policyFile) throw new Error('--authorization-mode: ABAC requires --authorization-policy-file');
      return { type: 'ABAC', name, authorizer: new AbacAuthorizer(loadAbacPolicyFile(opts.policyFile, deps.apiDomain)) };
    },
    RBAC: rbacEntry,
    Node: async (name) => {
      if (!deps.sources) throw new Error('--authorization-mode: Node needs the object sources of the server');
      // follows pods, claims and volumes from now on; stopped with the server
      const node = createNodeAuthorization({ sources: deps.sources, apiDomain: deps.apiDomain, withSelectors: deps.nodeWithSelectors ?? true, log: deps.log });
      node.start();
      stoppers.push(() => node.stop());
      return { type: 'Node', name, authorizer: node.authorizer };
    },
    Webhook: async (name) => {
      // the flag form has no failurePolicy or timeout flags; kube uses NoOpinion and 30 s for it,
      // and sends v1beta1 reviews unless --authorization-webhook-version says otherwise (§5.16)
      const w = opts.webhook;
      if (!w?.configFile) throw new Error('--authorization-mode: Webhook requires --authorization-webhook-config-file');
      return webhookEntry(name, deps, '--authorization-webhook-config-file', {
        timeoutMs: 30_000,
        authorizedTtlMs: w.authorizedTtlMs ?? DEFAULT_AUTHORIZED_TTL_MS,
        unauthorizedTtlMs: w.unauthorizedTtlMs ?? DEFAULT_UNAUTHORIZED_TTL_MS,
        subjectAccessReviewVersion: w.version ?? 'v1beta1',
        failurePolicy: 'NoOpinion',
        kubeConfigFile: w.configFile,
        matchConditions: [],
      });
    },
  };
  const stopRbac = (): void => {
    unfollow?.();
    unfollow = undefined;
    for (const stop of stoppers.splice(0)) stop();
  };
  if (opts.configFile) return { ...(await configFileAuthorization(opts.configFile, factories, deps, stopRbac)), rbac };
  if (opts.webhook?.configFile && !(opts.mode ?? DEFAULT_AUTHORIZATION_MODE).split(',').some((m) => m.trim() === 'Webhook')) {
    throw new Error('--authorization-webhook-config-file requires Webhook in --authorization-mode');
  }
  const modes = parseAuthorizationModes(opts.mode ?? DEFAULT_AUTHORIZATION_MODE);
  const entries: ChainEntry[] = [{ type: 'SystemMasters', name: 'system:masters', authorizer: new PrivilegedGroupAuthorizer() }];
  for (const m of modes) entries.push(await factories[m](m.toLowerCase()));
  const chain = new AuthorizerChain(entries, observer(deps));
  return {
    chain,
    rbac,
    start() {},
    stop: stopRbac,
  };
}


/** the first `--authorization-webhook-*` flag that was given, for the startup error */
function webhookFlagGiven(w: NonNullable<AuthorizationOptions['webhook']>): string {
  if (w.configFile) return '--authorization-webhook-config-file';
  if (w.authorizedTtlMs !== undefined) return '--authorization-webhook-cache-authorized-ttl';
  if (w.unauthorizedTtlMs !== undefined) return '--authorization-webhook-cache-unauthorized-ttl';
  return '--authorization-webhook-version';
}

function observer(deps: AuthorizationDeps): DecisionObserver | undefined {
  return deps.observe ?? deps.metrics?.observeDecision;
}

function webhookEntry(name: string, deps: AuthorizationDeps, flag: string, w: WebhookConfig): ChainEntry {
  const authorizer = new WebhookAuthorizer({
    name,
    target: loadWebhookKubeconfig(w.kubeConfigFile, flag),
    group: `authorization.${deps.apiDomain}`,
    version: w.subjectAccessReviewVersion,
    timeoutMs: w.timeoutMs,
    authorizedTtlMs: w.authorizedTtlMs,
    unauthorizedTtlMs: w.unauthorizedTtlMs,
    failurePolicy: w.failurePolicy,
    matchConditions: w.matchConditions,
    metrics: deps.metrics,
    now: () => (deps.clock ?? systemClock).now(),
  });
  return { type: 'Webhook', name, authorizer };
}

/** `--authorization-config` (§5.12): the chain from the file, rebuilt whole on every change. */
async function configFileAuthorization(
  path: string,
  factories: Record<AuthorizationMode, EntryFactory>,
  deps: AuthorizationDeps,
  stopShared: () => void,
): Promise<Omit<AuthorizationSetup, 'rbac'>> {
  // Node and RBAC authorizers keep watches and indexes: built once and reused by
  // every reload (only their name may change); webhooks are rebuilt (new caches).
  const shared = new Map<AuthorizationMode, ChainEntry>();
  const sharedEntry = async (type: 'Node' | 'RBAC', name: string): Promise<ChainEntry> => {
    let e = shared.get(type);
    if (!e) {
      e = await factories[type](name);
      shared.set(type, e);
    }
    return { ...e, name };
  };
  const build = async (content: string): Promise<ChainEntry[]> => {
    const cfg = loadAuthorizationConfiguration(path, deps.apiDomain, content);
    const entries: ChainEntry[] = [{ type: 'SystemMasters', name: 'system:masters', authorizer: new PrivilegedGroupAuthorizer() }];
    for (const [i, a] of cfg.authorizers.entries()) {
      const where = `--authorization-config: ${path}: authorizers[${i}]`;
      try {
        entries.push(a.type === 'Webhook' ? webhookEntry(a.name, deps, `${where}.webhook.connectionInfo.kubeConfigFile`, a.webhook) : await sharedEntry(a.type, a.name));
      } catch (e) {
        const msg = (e as Error).message;
        throw new Error(msg.startsWith('--authorization-config') ? msg : `${where}: ${msg}`);
      }
    }
    return entries;
  };
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`--authorization-config: ${(e as Error).message}`);
  }
  const chain = new AuthorizerChain(await build(content), observer(deps));
  const reloader = new ConfigReloader(
    { path, chain, build, log: deps.log, reloaded: (status) => deps.metrics?.reloaded(status, (deps.clock ?? systemClock).now()), intervalMs: deps.configReloadIntervalMs, clock: deps.clock ?? systemClock },
    content,
  );
  return {
    chain,
    start: () => reloader.start(),
    stop: () => {
      reloader.stop();
      stopShared();
    },
    reload: () => reloader.check(),
  };
}

function notBuilt(mode: string): EntryFactory {
  return async () => {
    throw new Error(`--authorization-mode: ${mode} is not available in this build`);
  };
}
