// Builds the authentication chain of spec 001 §5 from the server's options:
// which methods are on, in which order, the review kinds and the TokenRequest
// sub-resource they serve, the service-account issuer documents, and the
// controllers that keep bootstrap tokens tidy. server.ts calls this once.

import { type Clock, type TimerHandle, every } from '../core/clock.js';
import { join } from 'node:path';
import { decodeObject } from '../registry/generic-store.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { Registry } from '../registry/registry.js';
import { SchemaNames } from '../machinery/schema/naming.js';
import type { ResourceDefinition } from '../registry/types.js';
import { type AnonymousPolicy, AuthenticationChain, type Authenticator } from '../auth/authn/chain.js';
import { TokenUserCache } from '../auth/authn/token-user-cache.js';
import type { ObjectGetter } from '../auth/authn/objects.js';
import { loadServiceAccountKeys } from '../auth/authn/sa-keys.js';
import { ServiceAccountTokenAuthenticator, ServiceAccountTokenIssuer } from '../auth/authn/serviceaccount.js';
import { StaticTokenAuthenticator } from '../auth/authn/static-token.js';
import { ADMIN_COMMON_NAME, ADMIN_ORGANIZATION } from './pki.js';
import { BearerTokenAuthenticator, type TokenAuthenticator, TokenUnion } from '../auth/authn/token.js';
import { authenticateClientCertificate } from '../auth/authn/x509.js';
import { accessReviewDefinitions } from '../auth/kinds/access-reviews.js';
import { selfSubjectReviewDefinition, tokenReviewDefinitions } from '../auth/kinds/reviews.js';
import { withTokenRequest } from '../auth/kinds/tokenrequest.js';
import type { NonResourceDoc } from '../endpoints/chain.js';
import { readFileSync } from 'node:fs';
import { RequestHeaderAuthenticator } from '../auth/authn/requestheader.js';
import { BootstrapTokenAuthenticator } from '../auth/authn/bootstrap-token.js';
import { BootstrapSignerController } from '../controllers/bootstrapsigner.js';
import { TokenCleanerController } from '../controllers/tokencleaner.js';
import { SA_TOKEN_CONTROLLER, ServiceAccountTokenSecretsController } from '../controllers/sa-token-secrets.js';
import { controllerEnabled } from './controllers-flag.js';
import { type LeaderGate, runWhileLeader } from '../controllers/leader-gate.js';
import type { RevisionedStore } from '../store/types.js';
import { type AnonymousConfig, loadAuthenticationConfig } from '../auth/authn/auth-config.js';
import { JwtAuthenticator, type OidcFlags, configFromOidcFlags } from '../auth/authn/jwt.js';
import { DEFAULT_WEBHOOK_CACHE_TTL_MS, WebhookTokenAuthenticator, loadWebhookKubeconfig } from '../auth/authn/webhook.js';

/** The authentication flags of `orch server` (spec 001 §5), all optional. */
export interface AuthenticationOptions {
  /** `--anonymous-auth` (default true, §5.9) */
  anonymousAuth?: boolean;
  /** `--client-ca-file`: extra CAs whose client certificates authenticate (the cluster CA always does) */
  clientCAFile?: string;
  /** `--token-auth-file` (§5.3) */
  tokenAuthFile?: string;
  /** `--service-account-key-file` (repeatable): extra verification keys (§5.5) */
  serviceAccountKeyFiles?: string[];
  /** `--service-account-signing-key-file`; default: a key kept in `<pki-dir>/sa.key` (shared by cluster members) */
  serviceAccountSigningKeyFile?: string;
  /** `--service-account-issuer` (repeatable: the first signs, all are accepted) */
  serviceAccountIssuers?: string[];
  /** `--service-account-lookup` (default true) */
  serviceAccountLookup?: boolean;
  /** `--service-account-max-token-expiration`, seconds */
  serviceAccountMaxTokenExpirationSeconds?: number;
  /** `--api-audiences`; default the service-account issuer */
  apiAudiences?: string[];
  /** `--enable-bootstrap-token-auth` (§5.4) */
  enableBootstrapTokenAuth?: boolean;
  /**
   * `--controllers`: `tokencleaner` and `bootstrapsigner` (off by default, as
   * in Kubernetes) are started when listed; other names are other components'.
   */
  controllers?: string[];
  /** `--requestheader-*` (§5.8): the authenticating proxy */
  requestHeader?: { clientCAFile: string; usernameHeaders: string[]; groupHeaders?: string[]; extraHeaderPrefixes?: string[]; allowedNames?: string[] };
  /** `--oidc-*` (§5.6); cannot be combined with `authenticationConfigFile` */
  oidc?: OidcFlags;
  /** `--authentication-config`: AuthenticationConfiguration file, reloaded on change (§5.6) */
  authenticationConfigFile?: string;
  /** how often the configuration file is polled for changes (default 1 s) */
  authenticationConfigPollMs?: number;
  /** `--authentication-token-webhook-config-file`, `-cache-ttl`, `-version` (§5.7) */
  webhook?: { configFile: string; cacheTtlMs?: number; version?: 'v1' | 'v1beta1' };
}

export interface AuthenticationDeps {
  apiDomain: string;
  dataDir: string;
  /** where the cluster's shared certificates live (the default service-account key sits there too) */
  pkiDir?: string;
  registry: Registry;
  store: RevisionedStore;
  storeFor(def: ResourceDefinition): GenericStore;
  /** the server's URL once it listens (issuer discovery, cluster-info) */
  serverUrl(): string;
  /** the cluster CA (PEM) */
  caPem: string;
  /** the generated admin kubeconfig's bearer token ('' for none): `orch-admin` in `system:masters` */
  adminToken?: string;
  /** NodeRestriction admission is on: it also limits the tokens a node may request (tokenrequest.ts) */
  nodeRestriction?: boolean;
  /** token expiry, caches and the config poll */
  clock: Clock;
  log(msg: string): void;
}

export interface Authentication {
  chain: AuthenticationChain;
  /** tokens the chain accepted, for shedding's classification (src/gateway/flowcontrol/early-shed.ts) */
  tokenUsers: TokenUserCache;
  /** the token methods, for TokenReview */
  tokens: TokenAuthenticator;
  /** PEM of the `--client-ca-file` bundle, to add to the TLS front's client CAs ('' when none) */
  clientCAPem: string;
  /** `/.well-known/openid-configuration` and `/openid/v1/jwks` (§5.5) */
  nonResource(path: string): NonResourceDoc | undefined;
  /** registers gauges with the server's metrics (config reload status) */
  registerMetrics(gauge: (name: string, help: string, read: () => number) => void): void;
  /** the outcome of the last AuthenticationConfiguration (re)load, when one is configured */
  configStatus(): { lastAttempt: number; ok: boolean; error?: string } | undefined;
  /** starts controllers and file watchers (after the server listens) */
  start(): void;
  stop(): void;
}

export const DEFAULT_SERVICE_ACCOUNT_ISSUER = 'https://orch.default.svc';

/** kube's legacy-token-last-used label, written once a day per Secret at most, one write at a time */
function legacyTokenUseRecorder(deps: AuthenticationDeps): (namespace: string, secretName: string, label: string, day: string) => void {
  const writing = new Set<string>();
  return (namespace, secretName, label, day) => {
    const key = `${namespace}/${secretName}`;
    const def = deps.registry.lookup('', 'v1', 'secrets');
    if (!def || writing.has(key)) return;
    writing.add(key);
    deps
      .storeFor(def)
      .guaranteedUpdate(namespace, secretName, { dryRun: false, manager: 'kube-apiserver' }, (cur) => {
        if (!cur) throw new Error('gone');
        return { ...cur, metadata: { ...cur.metadata, labels: { ...(cur.metadata?.labels ?? {}), [label]: day } } };
      })
      .catch((e: unknown) => deps.log(`legacy token ${key}: last-used label not written: ${(e as Error).message}`))
      .finally(() => writing.delete(key));
  };
}

export async function buildAuthentication(opts: AuthenticationOptions, deps: AuthenticationDeps): Promise<Authentication> {
  const now = (): number => deps.clock.now();
  const n = new SchemaNames(deps.apiDomain);
  const objects: ObjectGetter = (resource, namespace, name) => {
    const def = deps.registry.lookup('', 'v1', resource);
    if (!def) return undefined;
    const kv = deps.storeFor(def).readRaw(namespace, name);
    return kv ? decodeObject(kv) : undefined;
  };
  const stops: (() => void)[] = [];
  const starts: (() => void)[] = [];

  // --- certificates (§5.3)
  let clientCAPem = '';
  if (opts.clientCAFile) {
    try {
      clientCAPem = readFileSync(opts.clientCAFile, 'utf8');
    } catch (e) {
      throw new Error(`--client-ca-file: cannot read ${opts.clientCAFile}: ${(e as Error).message}`);
    }
    if (!clientCAPem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`--client-ca-file: ${opts.clientCAFile}: no PEM certificate found`);
  }

  // --- token methods, in the order they are tried
  const tokenMethods: TokenAuthenticator[] = [];
  if (deps.adminToken) {
    tokenMethods.push(new StaticTokenAuthenticator(new Map([[deps.adminToken, { username: ADMIN_COMMON_NAME, uid: '', groups: [ADMIN_ORGANIZATION] }]])));
  }
  if (opts.tokenAuthFile) tokenMethods.push(StaticTokenAuthenticator.fromFile(opts.tokenAuthFile));

  // bootstrap tokens (§5.4)
  if (opts.enableBootstrapTokenAuth) tokenMethods.push(new BootstrapTokenAuthenticator(objects, deps.apiDomain, now, deps.log));

  // service accounts (§5.5)
  const issuers = opts.serviceAccountIssuers && opts.serviceAccountIssuers.length > 0 ? opts.serviceAccountIssuers : [DEFAULT_SERVICE_ACCOUNT_ISSUER];
  for (const i of issuers) {
    if (!/^https:\/\/|^[a-z][a-z0-9+.-]*:/i.test(i)) throw new Error(`--service-account-issuer: ${JSON.stringify(i)} must be a URL (https://…) or URI`);
  }
  const apiAudiences = opts.apiAudiences && opts.apiAudiences.length > 0 ? opts.apiAudiences : [issuers[0]!];
  const saKeys = loadServiceAccountKeys({
    keyFiles: opts.serviceAccountKeyFiles,
    signingKeyFile: opts.serviceAccountSigningKeyFile,
    defaultKeyPath: join(deps.pkiDir ?? join(deps.dataDir, 'pki'), 'sa.key'),
  });
  const issuer = new ServiceAccountTokenIssuer(saKeys, issuers[0]!, deps.apiDomain, now);
  tokenMethods.push(
    new ServiceAccountTokenAuthenticator({
      keys: saKeys,
      issuers,
      apiDomain: deps.apiDomain,
      lookup: opts.serviceAccountLookup ?? true,
      objects,
      apiAudiences,
      markLegacyTokenUsed: { now, record: legacyTokenUseRecorder(deps) },
    }),
  );

  // OIDC by flags (§5.6)
  if (opts.oidc) {
    let ca: string | undefined;
    if (opts.oidc.caFile) {
      try {
        ca = readFileSync(opts.oidc.caFile, 'utf8');
      } catch (e) {
        throw new Error(`--oidc-ca-file: cannot read ${opts.oidc.caFile}: ${(e as Error).message}`);
      }
    }
    const jwt = new JwtAuthenticator(configFromOidcFlags(opts.oidc, ca), deps.log, now);
    if (issuers.includes(jwt.config.issuer.url)) throw new Error('--oidc-issuer-url must differ from --service-account-issuer');
    tokenMethods.push(jwt);
    starts.push(() => void jwt.refresh());
  }

  // structured configuration (§5.6, §5.9): JWT authenticators and the anonymous policy, reloaded on change
  let configJwts: JwtAuthenticator[] = [];
  let status: { lastAttempt: number; ok: boolean; error?: string } | undefined;
  let anonymous: AnonymousPolicy = opts.anonymousAuth ?? true;
  const policyFor = (a: AnonymousConfig | undefined): AnonymousPolicy => {
    if (!a) return opts.anonymousAuth ?? true;
    if (!a.enabled) return false;
    return a.paths.length === 0 ? true : (path: string) => a.paths.includes(path);
  };
  const loadConfig = (): { jwts: JwtAuthenticator[]; anonymous: AnonymousPolicy } => {
    const cfg = loadAuthenticationConfig(opts.authenticationConfigFile!, { apiDomain: deps.apiDomain, serviceAccountIssuers: issuers });
    if (cfg.anonymous && opts.anonymousAuth !== undefined) throw new Error('--anonymous-auth cannot be combined with the anonymous field of --authentication-config');
    return { jwts: cfg.jwt.map((c) => new JwtAuthenticator(c, deps.log, now)), anonymous: policyFor(cfg.anonymous) };
  };
  if (opts.authenticationConfigFile) {
    if (opts.oidc) throw new Error('--authentication-config cannot be combined with the --oidc-* flags');
    const first = loadConfig(); // a bad file refuses the start, naming the field
    configJwts = first.jwts;
    anonymous = first.anonymous;
    status = { lastAttempt: now(), ok: true };
    const file = opts.authenticationConfigFile;
    let lastText = readFileSync(file, 'utf8');
    const poll = (): void => {
      let text: string;
      try {
        text = readFileSync(file, 'utf8');
      } catch (e) {
        text = `unreadable: ${(e as Error).message}`;
      }
      if (text === lastText) return;
      lastText = text;
      try {
        const next = loadConfig();
        configJwts = next.jwts;
        chain.setAnonymous(next.anonymous);
        for (const j of next.jwts) void j.refresh();
        status = { lastAttempt: now(), ok: true };
        deps.log(`authentication configuration reloaded from ${file}`);
      } catch (e) {
        // keep serving with the previous configuration
        status = { lastAttempt: now(), ok: false, error: (e as Error).message };
        deps.log(`authentication configuration reload failed, keeping the previous one: ${(e as Error).message}`);
      }
    };
    let timer: TimerHandle | undefined;
    starts.push(() => {
      for (const j of configJwts) void j.refresh();
      timer = every(deps.clock, opts.authenticationConfigPollMs ?? 1000, poll);
    });
    stops.push(() => timer?.cancel());
  }

  // webhook last: it is remote (§5.7)
  const webhooks: TokenAuthenticator[] = [];
  if (opts.webhook) {
    const version = opts.webhook.version ?? 'v1beta1';
    if (version !== 'v1' && version !== 'v1beta1') throw new Error('--authentication-token-webhook-version: must be v1 or v1beta1');
    webhooks.push(
      new WebhookTokenAuthenticator({
        target: loadWebhookKubeconfig(opts.webhook.configFile),
        group: `authentication.${deps.apiDomain}`,
        version,
        cacheTtlMs: opts.webhook.cacheTtlMs ?? DEFAULT_WEBHOOK_CACHE_TTL_MS,
        now,
      }),
    );
  }

  const tokens = new TokenUnion(() => [...tokenMethods, ...configJwts, ...webhooks], apiAudiences);
  const authenticators: Authenticator[] = [];
  if (opts.requestHeader) {
    let pem: string;
    try {
      pem = readFileSync(opts.requestHeader.clientCAFile, 'utf8');
    } catch (e) {
      throw new Error(`--requestheader-client-ca-file: cannot read ${opts.requestHeader.clientCAFile}: ${(e as Error).message}`);
    }
    authenticators.push(
      new RequestHeaderAuthenticator({
        clientCAPem: pem,
        usernameHeaders: opts.requestHeader.usernameHeaders,
        groupHeaders: opts.requestHeader.groupHeaders ?? [],
        extraHeaderPrefixes: opts.requestHeader.extraHeaderPrefixes ?? [],
        allowedNames: opts.requestHeader.allowedNames ?? [],
        now,
      }),
    );
  }
  authenticators.push(
    { name: 'x509', authenticate: (req) => authenticateClientCertificate(req.peer) },
    new BearerTokenAuthenticator(tokens, apiAudiences),
  );
  // who each token last authenticated as, for overload shedding before authentication (never to authenticate)
  const tokenUsers = new TokenUserCache({ clock: deps.clock });
  const chain = new AuthenticationChain(authenticators, anonymous, (token, user) => tokenUsers.remember(token, user));

  // --- kinds served: the reviews, and TokenRequest on serviceaccounts
  for (const d of [...tokenReviewDefinitions(n, tokens), selfSubjectReviewDefinition(n)]) deps.registry.add(d);
  // the authorization reviews (spec 001 §2.3) ask HandlerContext.authorizer
  for (const d of accessReviewDefinitions(n)) deps.registry.add(d);
  const saDef = deps.registry.lookup('', 'v1', 'serviceaccounts');
  if (saDef) {
    deps.registry.add(
      withTokenRequest(saDef, {
        apiDomain: deps.apiDomain,
        issuer,
        apiAudiences,
        maxExpirationSeconds: opts.serviceAccountMaxTokenExpirationSeconds,
        objects,
        nodeRestriction: deps.nodeRestriction ?? true,
      }),
    );
  }

  // --- issuer discovery (§5.5): served by the API server, anonymous access allowed
  const jwks = JSON.stringify({ keys: saKeys.verify.map((k) => k.jwk) });
  const nonResource = (path: string): NonResourceDoc | undefined => {
    if (path === '/.well-known/openid-configuration') {
      const doc = {
        issuer: issuers[0],
        jwks_uri: `${deps.serverUrl()}/openid/v1/jwks`,
        response_types_supported: ['id_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: [...new Set(saKeys.verify.map((k) => k.alg))],
      };
      return { status: 200, body: null, raw: { contentType: 'application/json', text: JSON.stringify(doc) } };
    }
    if (path === '/openid/v1/jwks') return { status: 200, body: null, raw: { contentType: 'application/jwk-set+json', text: jwks } };
    return undefined;
  };

  // --- controllers (§5.4)
  const controllers = new Set(opts.controllers ?? []);
  const core = (resource: string) => () => {
    const def = deps.registry.lookup('', 'v1', resource)!;
    return { def, gs: deps.storeFor(def) };
  };
  // kube's tokens controller: on by default (`-serviceaccount-token` turns it off)
  if (controllerEnabled(opts.controllers, SA_TOKEN_CONTROLLER, true)) {
    const c = new ServiceAccountTokenSecretsController({
      store: deps.store,
      secrets: core('secrets'),
      serviceAccounts: core('serviceaccounts'),
      keys: saKeys,
      apiDomain: deps.apiDomain,
      caPem: deps.caPem,
      log: deps.log,
      clock: deps.clock,
    });
    let gate: LeaderGate | undefined;
    starts.push(() => (gate = runWhileLeader(deps.store, c, { name: SA_TOKEN_CONTROLLER, log: deps.log })));
    stops.push(() => gate?.stop());
  }
  if (controllers.has('tokencleaner')) {
    const c = new TokenCleanerController(deps.store, core('secrets'), deps.apiDomain, deps.log);
    // on the Raft leader only (leader-gate.ts)
    let gate: LeaderGate | undefined;
    starts.push(() => (gate = runWhileLeader(deps.store, c, { name: 'tokencleaner', log: deps.log })));
    stops.push(() => gate?.stop());
  }
  if (controllers.has('bootstrapsigner')) {
    const c = new BootstrapSignerController({
      store: deps.store,
      secrets: core('secrets'),
      configMaps: core('configmaps'),
      apiDomain: deps.apiDomain,
      server: deps.serverUrl,
      caPem: deps.caPem,
      log: deps.log,
    });
    let gate: LeaderGate | undefined;
    starts.push(() => (gate = runWhileLeader(deps.store, c, { name: 'bootstrapsigner', log: deps.log })));
    stops.push(() => gate?.stop());
  }

  return {
    chain,
    tokenUsers,
    tokens,
    clientCAPem,
    nonResource,
    registerMetrics(gauge) {
      if (!opts.authenticationConfigFile) return;
      gauge(
        'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
        'Time of the last automatic reload attempt of the authentication configuration (Unix seconds).',
        () => (status?.lastAttempt ?? 0) / 1000,
      );
      gauge('apiserver_authentication_config_controller_automatic_reload_last_success', '1 when the last reload attempt of the authentication configuration succeeded, 0 when it failed.', () => (status?.ok ? 1 : 0));
    },
    configStatus: () => (status ? { ...status } : undefined),
    start() {
      for (const s of starts) s();
    },
    stop() {
      for (const s of stops) s();
    },
  };
}
