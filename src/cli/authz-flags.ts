// The authorization flags of `orch server` (spec 001 §5.12, §5.16, §5.17):
// parsed here, used by src/server/authorization-setup.ts.

import { type Command, InvalidArgumentError } from 'commander';
import type { AuthorizationOptions } from '../server/authorization-setup.js';

/** Go-style durations as kube flags take them: 5m0s, 30s, 1h, 300ms */
export function goDuration(v: string): number {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = v.trim();
  // as Go's time.ParseDuration: a unit is required except for 0
  if (rest === '0') return 0;
  if (rest === '') throw new InvalidArgumentError('must be a duration such as 5m0s or 30s');
  while (rest !== '') {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)/.exec(rest);
    if (!m) throw new InvalidArgumentError('must be a duration such as 5m0s or 30s');
    total += Number(m[1]) * unit[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  return total;
}

function webhookVersion(v: string): 'v1' | 'v1beta1' {
  if (v !== 'v1' && v !== 'v1beta1') throw new InvalidArgumentError('must be v1 or v1beta1');
  return v;
}

export function addAuthorizationFlags(cmd: Command): Command {
  return cmd
    .option('--authorization-mode <modes>', 'authorizers in order: AlwaysAllow, AlwaysDeny, ABAC, RBAC, Node, Webhook (default Node,RBAC)')
    .option('--authorization-config <file>', 'AuthorizationConfiguration file (apiserver.config.<domain>/v1); exclusive with --authorization-mode')
    .option('--authorization-policy-file <file>', 'ABAC policy file, one JSON policy per line')
    .option('--authorization-webhook-config-file <file>', 'kubeconfig-format file of the authorization webhook')
    .option('--authorization-webhook-cache-authorized-ttl <duration>', 'how long allowed webhook answers are cached (default 5m0s)', goDuration)
    .option('--authorization-webhook-cache-unauthorized-ttl <duration>', 'how long denied webhook answers are cached (default 30s)', goDuration)
    .option('--authorization-webhook-version <version>', 'SubjectAccessReview version sent to the webhook: v1 or v1beta1 (default v1beta1)', webhookVersion);
}

export function authorizationOptionsFrom(o: Record<string, unknown>): AuthorizationOptions {
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  const num = (k: string) => (typeof o[k] === 'number' ? (o[k] as number) : undefined);
  const webhookFile = str('authorizationWebhookConfigFile');
  return {
    mode: str('authorizationMode'),
    configFile: str('authorizationConfig'),
    policyFile: str('authorizationPolicyFile'),
    ...(webhookFile
      ? {
          webhook: {
            configFile: webhookFile,
            authorizedTtlMs: num('authorizationWebhookCacheAuthorizedTtl'),
            unauthorizedTtlMs: num('authorizationWebhookCacheUnauthorizedTtl'),
            version: str('authorizationWebhookVersion') as 'v1' | 'v1beta1' | undefined,
          },
        }
      : {}),
  };
}
