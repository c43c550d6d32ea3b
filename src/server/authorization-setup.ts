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
}

export interface AuthorizationSetup {
  chain: AuthorizerChain;
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
  const factories: Record<AuthorizationMode, EntryFactory> = {
    AlwaysAllow: async (name) => ({ type: 'AlwaysAllow', name, authorizer: new AlwaysAllowAuthorizer() }),
    AlwaysDeny: async (name) => ({ type: 'AlwaysDeny', name, authorizer: new AlwaysDenyAuthorizer() }),
    ABAC: notBuilt('ABAC'),
    RBAC: notBuilt('RBAC'),
    Node: notBuilt('Node'),
    Webhook: notBuilt('Webhook'),
  };
  const modes = parseAuthorizationModes(opts.mode ?? DEFAULT_AUTHORIZATION_MODE);
  const entries: ChainEntry[] = [{ type: 'SystemMasters', name: 'system:masters', authorizer: new PrivilegedGroupAuthorizer() }];
  for (const m of modes) entries.push(await factories[m](m.toLowerCase()));
  const chain = new AuthorizerChain(entries, deps.observe);
  return { chain, start() {}, stop() {} };
}

function notBuilt(mode: string): EntryFactory {
  return async () => {
    throw new Error(`--authorization-mode: ${mode} is not available in this build`);
  };
}
