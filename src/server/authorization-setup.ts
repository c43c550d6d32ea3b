// Builds the authorizer chain of spec 001 §5.12 from the server's options:
// `--authorization-mode` (default `Node,RBAC`) or `--authorization-config`
// (exclusive), with the privileged group first. server.ts calls this once.
// Each mode's factory lives beside its authorizer in src/auth/authz/.

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
}

export interface AuthorizationSetup {
  chain: AuthorizerChain;
  /** the RBAC state, for escalation prevention (one per server, shared by every RBAC link) */
  rbac: RbacIndex;
  /** start watches, reloads and controllers the authorizers need */
  start(): void;
  stop(): void;
}

type EntryFactory = (name: string) => Promise<ChainEntry>;

export async function buildAuthorization(opts: AuthorizationOptions, deps: AuthorizationDeps): Promise<AuthorizationSetup> {
  if (opts.configFile && (opts.mode !== undefined || opts.webhook)) {
    const other = opts.mode !== undefined ? '--authorization-mode' : '--authorization-webhook-config-file';
    throw new Error(`--authorization-config and ${other} cannot be used together (spec 001 §5.12)`);
  }
  // one RBAC index per server, followed from the store while the server runs
  const rbac = new RbacIndex();
  let unfollow: (() => void) | undefined;
  const rbacEntry: EntryFactory = async (name) => {
    if (!deps.sources) throw new Error('RBAC authorization needs the object sources of the server');
    unfollow ??= followRbacSources(rbac, deps.sources, `rbac.authorization.${deps.apiDomain}`);
    return { type: 'RBAC', name, authorizer: new RbacAuthorizer(rbac) };
  };
  const factories: Record<AuthorizationMode, EntryFactory> = {
    AlwaysAllow: async (name) => ({ type: 'AlwaysAllow', name, authorizer: new AlwaysAllowAuthorizer() }),
    AlwaysDeny: async (name) => ({ type: 'AlwaysDeny', name, authorizer: new AlwaysDenyAuthorizer() }),
    ABAC: notBuilt('ABAC'),
    RBAC: rbacEntry,
    // TODO(nodeauthz branch): replaced by the Node authorizer at merge; until then Node has no opinion
    Node: async (name) => ({ type: 'Node', name, authorizer: new NoOpinionAuthorizer() }),
    Webhook: notBuilt('Webhook'),
  };
  const modes = parseAuthorizationModes(opts.mode ?? DEFAULT_AUTHORIZATION_MODE);
  const entries: ChainEntry[] = [{ type: 'SystemMasters', name: 'system:masters', authorizer: new PrivilegedGroupAuthorizer() }];
  for (const m of modes) entries.push(await factories[m](m.toLowerCase()));
  const chain = new AuthorizerChain(entries, deps.observe);
  return {
    chain,
    rbac,
    start() {},
    stop() {
      unfollow?.();
      unfollow = undefined;
    },
  };
}

/** placeholder link that never decides (see the Node TODO above) */
class NoOpinionAuthorizer implements Authorizer {
  async authorize(): Promise<Decision> {
    return { decision: 'noOpinion' };
  }

  async rulesFor(): Promise<RulesResult> {
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

function notBuilt(mode: string): EntryFactory {
  return async () => {
    throw new Error(`--authorization-mode: ${mode} is not available in this build`);
  };
}
