// Webhook token authentication (spec 001 §5.7): the token is POSTed in a
// TokenReview to a remote service described by a kubeconfig-format file
// (`--authentication-token-webhook-config-file`); its `status` decides.
// Answers are cached for `--authentication-token-webhook-cache-ttl`
// (default 2 minutes, §8); transport failures are not cached.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from '../types.js';
import { type TlsClientOptions, httpJson } from './http-client.js';
import type { TokenAuthenticator, TokenResult } from './token.js';

export const DEFAULT_WEBHOOK_CACHE_TTL_MS = 2 * 60 * 1000;
const MAX_CACHE_ENTRIES = 10_000;

export interface WebhookTarget {
  server: string;
  tls: TlsClientOptions;
}

type Named<T> = { name?: string } & T;
interface Kubeconfig {
  clusters?: Named<{ cluster?: { server?: string; 'certificate-authority'?: string; 'certificate-authority-data'?: string } }>[];
  users?: Named<{ user?: { 'client-certificate'?: string; 'client-certificate-data'?: string; 'client-key'?: string; 'client-key-data'?: string; token?: string } }>[];
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  'current-context'?: string;
}

/** reads the client-config file; errors name the file and the field */
export function loadWebhookKubeconfig(path: string, flag = '--authentication-token-webhook-config-file'): WebhookTarget {
  let kc: Kubeconfig;
  try {
    kc = parseYaml(readFileSync(path, 'utf8')) as Kubeconfig;
  } catch (e) {
    throw new Error(`${flag}: ${path}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!kc || typeof kc !== 'object') throw new Error(`${flag}: ${path}: not a kubeconfig`);
  const ctxName = kc['current-context'];
  const ctx = kc.contexts?.find((c) => c.name === ctxName)?.context ?? kc.contexts?.[0]?.context;
  const cluster = (ctx?.cluster ? kc.clusters?.find((c) => c.name === ctx.cluster) : kc.clusters?.[0])?.cluster;
  if (!cluster?.server) throw new Error(`${flag}: ${path}: clusters[].cluster.server is required`);
  if (!/^https?:\/\//.test(cluster.server)) throw new Error(`${flag}: ${path}: clusters[].cluster.server must be an http(s) URL`);
  const user = (ctx?.user ? kc.users?.find((u) => u.name === ctx.user) : kc.users?.[0])?.user ?? {};
  const base = dirname(resolve(path));
  const file = (p: string | undefined, data: string | undefined, field: string): string | undefined => {
    if (data) return Buffer.from(data, 'base64').toString('utf8');
    if (!p) return undefined;
    try {
      return readFileSync(resolve(base, p), 'utf8');
    } catch (e) {
      throw new Error(`${flag}: ${path}: ${field}: ${(e as Error).message}`);
    }
  };
  return {
    server: cluster.server,
    tls: {
      ca: file(cluster['certificate-authority'], cluster['certificate-authority-data'], 'certificate-authority'),
      cert: file(user['client-certificate'], user['client-certificate-data'], 'client-certificate'),
      key: file(user['client-key'], user['client-key-data'], 'client-key'),
      token: user.token,
    },
  };
}

export interface WebhookOptions {
  target: WebhookTarget;
  /** `authentication.<domain>` */
  group: string;
  version: 'v1' | 'v1beta1';
  cacheTtlMs: number;
  /** the cache's clock (the composition root's) */
  now: () => number;
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly cache = new Map<string, { at: number; result: TokenResult }>();
  /** how many reviews were sent (tests and metrics) */
  calls = 0;

  constructor(private readonly o: WebhookOptions) {}

  async authenticateToken(token: string, audiences: string[]): Promise<TokenResult> {
    const now = this.o.now();
    const key = createHash('sha256').update(token).update('\0').update(audiences.join('\0')).digest('base64');
    const hit = this.cache.get(key);
    if (hit && now - hit.at < this.o.cacheTtlMs) return hit.result;
    let result: TokenResult;
    try {
      result = await this.review(token, audiences);
    } catch (e) {
      return { result: 'error', message: `webhook: ${(e as Error).message}` };
    }
    if (this.cache.size >= MAX_CACHE_ENTRIES) {
      for (const [k, v] of this.cache) if (now - v.at >= this.o.cacheTtlMs) this.cache.delete(k);
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    }
    this.cache.set(key, { at: now, result });
    return result;
  }

  private async review(token: string, audiences: string[]): Promise<TokenResult> {
    this.calls++;
    const apiVersion = `${this.o.group}/${this.o.version}`;
    const body = { apiVersion, kind: 'TokenReview', spec: { token, ...(audiences.length > 0 ? { audiences } : {}) } };
    const r = await httpJson('POST', this.o.target.server, body, this.o.target.tls);
    if (r.status < 200 || r.status >= 300) throw new Error(`remote answered status ${r.status}`);
    const review = r.json as { apiVersion?: string; kind?: string; status?: { authenticated?: boolean; user?: Partial<UserInfo>; audiences?: string[]; error?: string } };
    if (!review || review.kind !== 'TokenReview') throw new Error('remote did not answer with a TokenReview');
    // a webhook answers in the version it received (spec 001 §4)
    if (review.apiVersion !== apiVersion) throw new Error(`remote answered ${String(review.apiVersion)}, expected ${apiVersion}`);
    const s = review.status ?? {};
    if (s.authenticated !== true) return { result: 'error', message: s.error ? `webhook: ${s.error}` : 'Unauthorized' };
    const u = s.user ?? {};
    if (typeof u.username !== 'string' || u.username === '') throw new Error('status.user.username is required');
    const user: UserInfo = {
      username: u.username,
      ...(typeof u.uid === 'string' && u.uid !== '' ? { uid: u.uid } : {}),
      groups: Array.isArray(u.groups) ? u.groups.filter((g): g is string => typeof g === 'string') : [],
      ...(u.extra && typeof u.extra === 'object' ? { extra: u.extra } : {}),
    };
    if (Array.isArray(s.audiences)) {
      const granted = s.audiences.filter((a) => audiences.includes(a));
      if (audiences.length > 0 && granted.length === 0) return { result: 'error', message: 'webhook: token audiences do not match' };
      return { result: 'ok', user, audiences: granted };
    }
    return { result: 'ok', user };
  }
}
