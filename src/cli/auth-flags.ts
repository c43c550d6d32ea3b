// The authentication flags of `orch server` (spec 001 §5), kube-apiserver
// spelling. main.ts adds them with addAuthenticationFlags and turns the parsed
// values into ServerOptions.authn with authenticationOptionsFrom.

import { type Command, InvalidArgumentError } from 'commander';
import type { AuthenticationOptions } from '../server/authentication-setup.js';
import { DEFAULT_CONTROLLERS, OFF_BY_DEFAULT_CONTROLLERS, unknownControllers } from '../server/controllers-flag.js';

const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];
const list = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), ...v.split(',').map((s) => s.trim()).filter((s) => s !== '')];

/** `--controllers`: kube-controller-manager's `*`, `name`, `-name`; an unknown name is an error, as there */
function controllers(v: string, prev: string[] | undefined): string[] {
  const all = list(v, prev);
  const unknown = unknownControllers(all);
  if (unknown.length > 0) throw new InvalidArgumentError(`unknown controller ${unknown.map((u) => `"${u}"`).join(', ')} (known: ${[...DEFAULT_CONTROLLERS, ...OFF_BY_DEFAULT_CONTROLLERS].join(', ')})`);
  return all;
}

function bool(v: string | undefined): boolean {
  if (v === undefined || v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new InvalidArgumentError('must be true or false');
}

function seconds(v: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(v);
  if (!m) throw new InvalidArgumentError('must be a duration such as 120s, 2m or 1h');
  return Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

function keyValue(v: string, prev: Record<string, string> | undefined): Record<string, string> {
  const i = v.indexOf('=');
  if (i <= 0) throw new InvalidArgumentError('must be key=value');
  return { ...(prev ?? {}), [v.slice(0, i)]: v.slice(i + 1) };
}

export function addAuthenticationFlags(cmd: Command): Command {
  return cmd
    .option('--anonymous-auth [bool]', 'allow requests no authenticator claims, as system:anonymous (default true)', bool)
    .option('--client-ca-file <file>', 'PEM CAs whose client certificates authenticate (CN = user, O = groups), besides the cluster CA')
    .option('--token-auth-file <file>', 'static tokens: CSV token,user,uid[,groups...]')
    .option('--enable-bootstrap-token-auth', 'authenticate bootstrap tokens from Secrets in orch-system (kube-system with --api-domain k8s.io)')
    .option('--controllers <names>', `controllers to run, as kube-controller-manager: * (those on by default: ${DEFAULT_CONTROLLERS.join(', ')}), name, -name; ${OFF_BY_DEFAULT_CONTROLLERS.join(' and ')} are off by default (e.g. '*,tokencleaner,-scheduler')`, controllers)
    .option('--service-account-key-file <file>', 'PEM keys or certificates that verify service-account tokens (repeatable)', collect)
    .option('--service-account-signing-key-file <file>', 'PEM private key that signs service-account tokens (default <pki-dir>/sa.key)')
    .option('--service-account-issuer <url>', 'issuer of service-account tokens (repeatable; the first signs)', collect)
    .option('--service-account-lookup [bool]', 'revoke tokens of deleted service accounts (default true)', bool)
    .option('--service-account-max-token-expiration <duration>', 'cap on requested token lifetimes', seconds)
    .option('--api-audiences <list>', 'audiences of the API server (default the issuer)', list)
    .option('--oidc-issuer-url <url>', 'OpenID Connect issuer (https)')
    .option('--oidc-client-id <id>', 'audience every OIDC token must be issued for')
    .option('--oidc-username-claim <claim>', 'claim holding the user name (default sub)')
    .option('--oidc-username-prefix <prefix>', 'prefix for user names; "-" disables; default "<issuer>#" unless the claim is email')
    .option('--oidc-groups-claim <claim>', 'claim holding the groups (string array)')
    .option('--oidc-groups-prefix <prefix>', 'prefix for group names')
    .option('--oidc-required-claim <key=value>', 'a claim that must be present with this value (repeatable)', keyValue)
    .option('--oidc-ca-file <file>', 'CA of the identity provider (default host roots)')
    .option('--oidc-signing-algs <list>', 'accepted signing algorithms (default RS256)', list)
    .option('--authentication-config <file>', 'AuthenticationConfiguration (apiserver.config.orch.io/v1beta1); reloaded on change')
    .option('--authentication-token-webhook-config-file <file>', 'kubeconfig-format file of the token review webhook')
    .option('--authentication-token-webhook-cache-ttl <duration>', 'how long webhook answers are cached (default 2m)', seconds)
    .option('--requestheader-client-ca-file <file>', 'CA that signs the authenticating proxy\'s client certificate')
    .option('--requestheader-username-headers <list>', 'headers holding the user name, first non-empty wins (e.g. X-Remote-User)', list)
    .option('--requestheader-group-headers <list>', 'headers holding groups (e.g. X-Remote-Group)', list)
    .option('--requestheader-extra-headers-prefix <list>', 'header prefixes holding extra (e.g. X-Remote-Extra-)', list)
    .option('--requestheader-allowed-names <list>', 'allowed common names of the proxy certificate (default any)', list)
    .option('--authentication-token-webhook-version <v>', 'TokenReview version sent to the webhook: v1beta1 (default) or v1');
}

/** parsed flag values → ServerOptions.authn; combinations the specification forbids are refused */
export function authenticationOptionsFrom(o: Record<string, unknown>): AuthenticationOptions {
  const s = (k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const oidcIssuer = s('oidcIssuerUrl');
  const anyOidc = Object.keys(o).some((k) => k.startsWith('oidc') && o[k] !== undefined);
  if (anyOidc && !oidcIssuer) throw new Error('--oidc-* flags need --oidc-issuer-url');
  const webhook = s('authenticationTokenWebhookConfigFile');
  const version = s('authenticationTokenWebhookVersion');
  if (version !== undefined && version !== 'v1' && version !== 'v1beta1') throw new Error('--authentication-token-webhook-version must be v1 or v1beta1');
  return {
    ...(o.anonymousAuth !== undefined ? { anonymousAuth: o.anonymousAuth as boolean } : {}),
    ...(s('clientCaFile') ? { clientCAFile: s('clientCaFile') } : {}),
    ...(s('tokenAuthFile') ? { tokenAuthFile: s('tokenAuthFile') } : {}),
    ...(o.enableBootstrapTokenAuth ? { enableBootstrapTokenAuth: true } : {}),
    ...(o.controllers ? { controllers: o.controllers as string[] } : {}),
    ...(o.serviceAccountKeyFile ? { serviceAccountKeyFiles: o.serviceAccountKeyFile as string[] } : {}),
    ...(s('serviceAccountSigningKeyFile') ? { serviceAccountSigningKeyFile: s('serviceAccountSigningKeyFile') } : {}),
    ...(o.serviceAccountIssuer ? { serviceAccountIssuers: o.serviceAccountIssuer as string[] } : {}),
    ...(o.serviceAccountLookup !== undefined ? { serviceAccountLookup: o.serviceAccountLookup as boolean } : {}),
    ...(o.serviceAccountMaxTokenExpiration !== undefined ? { serviceAccountMaxTokenExpirationSeconds: o.serviceAccountMaxTokenExpiration as number } : {}),
    ...(o.apiAudiences ? { apiAudiences: o.apiAudiences as string[] } : {}),
    ...(oidcIssuer
      ? {
          oidc: {
            issuerURL: oidcIssuer,
            clientID: s('oidcClientId') ?? '',
            usernameClaim: s('oidcUsernameClaim'),
            usernamePrefix: s('oidcUsernamePrefix'),
            groupsClaim: s('oidcGroupsClaim'),
            groupsPrefix: s('oidcGroupsPrefix'),
            requiredClaims: o.oidcRequiredClaim as Record<string, string> | undefined,
            caFile: s('oidcCaFile'),
            signingAlgs: o.oidcSigningAlgs as string[] | undefined,
          },
        }
      : {}),
    ...(s('requestheaderClientCaFile')
      ? {
          requestHeader: {
            clientCAFile: s('requestheaderClientCaFile')!,
            usernameHeaders: (o.requestheaderUsernameHeaders as string[] | undefined) ?? [],
            groupHeaders: o.requestheaderGroupHeaders as string[] | undefined,
            extraHeaderPrefixes: o.requestheaderExtraHeadersPrefix as string[] | undefined,
            allowedNames: o.requestheaderAllowedNames as string[] | undefined,
          },
        }
      : {}),
    ...(s('authenticationConfig') ? { authenticationConfigFile: s('authenticationConfig') } : {}),
    ...(webhook
      ? {
          webhook: {
            configFile: webhook,
            ...(o.authenticationTokenWebhookCacheTtl !== undefined ? { cacheTtlMs: (o.authenticationTokenWebhookCacheTtl as number) * 1000 } : {}),
            ...(version ? { version: version as 'v1' | 'v1beta1' } : {}),
          },
        }
      : {}),
  };
}
