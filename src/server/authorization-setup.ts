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
import { createNodeAuthorization } from '../auth/authz/node/index.js';
import type { ObjectSources } from '../auth/authz/types.js';

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
  /** object feeds for the authorizers that follow stored objects (Node, RBAC) */
  sources?: ObjectSources;
  /** feature gate AuthorizeNodeWithSelectors (spec 001 §5.15); default on */
  nodeWithSelectors?: boolean;
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
  const starters: Array<{ start(): void; stop(): void }> = [];
  const factories: Record<AuthorizationMode, EntryFactory> = {
    AlwaysAllow: async (name) => ({ type: 'AlwaysAllow', name, authorizer: new AlwaysAllowAuthorizer() }),
    AlwaysDeny: async (name) => ({ type: 'AlwaysDeny', name, authorizer: new AlwaysDenyAuthorizer() }),
    ABAC: notBuilt('ABAC'),
    RBAC: notBuilt('RBAC'),
    Node: async (name) => {
      if (!deps.sources) throw new Error('--authorization-mode: Node needs the object sources of the server');
      const node = createNodeAuthorization({ sources: deps.sources, apiDomain: deps.apiDomain, withSelectors: deps.nodeWithSelectors ?? true, log: deps.log });
      starters.push(node);
      return { type: 'Node', name, authorizer: node.authorizer };
    },
    Webhook: notBuilt('Webhook'),
  };
  const modes = parseAuthorizationModes(opts.mode ?? DEFAULT_AUTHORIZATION_MODE);
  const entries: ChainEntry[] = [{ type: 'SystemMasters', name: 'system:masters', authorizer: new PrivilegedGroupAuthorizer() }];
  for (const m of modes) entries.push(await factories[m](m.toLowerCase()));
  const chain = new AuthorizerChain(entries, deps.observe);
  return {
    chain,
    start() {
      for (const s of starters) s.start();
    },
    stop() {
      for (const s of starters) s.stop();
    },
  };
}

function notBuilt(mode: string): EntryFactory {
  return async () => {
    throw new Error(`--authorization-mode: ${mode} is not available in this build`);
  };
}
