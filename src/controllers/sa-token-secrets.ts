// kube-controller-manager's `serviceaccount-token` controller (its tokens
// controller, for the Secrets users still make by hand): a Secret of type
// `<prefix>/service-account-token` naming an existing account gets `token`
// (a long-lived legacy JWT, src/auth/authn/legacy-sa-token.ts), `ca.crt`,
// `namespace` and the account's uid annotation; one naming an account that
// does not exist (or exists with another uid) is deleted, and so are an
// account's token Secrets when the account goes. It never makes a Secret
// for an account (kube's LegacyServiceAccountTokenNoAutoGeneration). Runs on
// the Raft leader, level-driven: a key is a Secret's `namespace/name`.

import { StatusError } from '../core/errors.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { GenericStore } from '../registry/generic-store.js';
import type { ApiObject, ResourceDefinition } from '../registry/types.js';
import { issueLegacyToken, tokenSecretAccount, tokenSecretPrefix } from '../auth/authn/legacy-sa-token.js';
import type { ServiceAccountKeys } from '../auth/authn/sa-keys.js';
import { ControllerLoop, LoopController, type Informer, type InformerSource } from './runtime/index.js';

export const SA_TOKEN_CONTROLLER = 'serviceaccount-token';

export interface ServiceAccountTokenSecretsOptions {
  store: InformerSource;
  secrets: () => { def: ResourceDefinition; gs: GenericStore };
  serviceAccounts: () => { def: ResourceDefinition; gs: GenericStore };
  keys: ServiceAccountKeys;
  apiDomain: string;
  /** the cluster CA, PEM: the Secret's `ca.crt` */
  caPem: string;
  log?: (msg: string) => void;
  clock?: Clock;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export class ServiceAccountTokenSecretsController extends LoopController {
  protected readonly loop: ControllerLoop;
  private secretsInformer: Informer | undefined;

  constructor(private readonly o: ServiceAccountTokenSecretsOptions) {
    super();
    this.loop = new ControllerLoop(o.store, { name: SA_TOKEN_CONTROLLER, clock: o.clock ?? systemClock, log: o.log, baseDelayMs: 500 });
  }

  start(): void {
    this.loop.begin((key) => this.sync(key));
    const onSecret = (o: ApiObject, key: string): void => {
      if (tokenSecretPrefix(o, this.o.apiDomain)) this.loop.enqueue(key);
    };
    this.secretsInformer = this.loop.inform(this.o.secrets().gs.rangeKeys(''), { add: onSecret, update: (_old, o, key) => onSecret(o, key) });
    // an account that goes takes its token Secrets with it (kube's deleteTokens)
    this.loop.inform(this.o.serviceAccounts().gs.rangeKeys(''), {
      delete: (sa) => {
        const ns = String(sa.metadata?.namespace ?? '');
        for (const s of this.secretsInformer?.inNamespace(ns) ?? []) {
          const prefix = tokenSecretPrefix(s, this.o.apiDomain);
          if (prefix && tokenSecretAccount(s, prefix)?.name === sa.metadata?.name) this.loop.enqueue(`${ns}/${String(s.metadata?.name)}`);
        }
      },
    });
  }

  stop(): void {
    this.loop.end();
  }

  private async sync(key: string): Promise<void> {
    const secret = this.secretsInformer?.get(key);
    if (!secret || secret.metadata?.deletionTimestamp) return;
    const prefix = tokenSecretPrefix(secret, this.o.apiDomain);
    const account = prefix ? tokenSecretAccount(secret, prefix) : undefined;
    if (!prefix || !account) return;
    const ns = String(secret.metadata?.namespace ?? '');
    const name = String(secret.metadata?.name ?? '');
    // the account as stored now, not as an informer may lag behind it: a Secret made right after its account stays
    const sa = await this.o.serviceAccounts().gs.get(ns, account.name).catch((e: unknown) => {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    });
    if (!sa || sa.metadata?.deletionTimestamp || (account.uid !== '' && sa.metadata?.uid !== account.uid)) {
      await this.deleteSecret(ns, name, String(secret.metadata?.uid ?? ''));
      return;
    }
    const data = (secret.data ?? {}) as Record<string, string>;
    const saUid = String(sa.metadata?.uid ?? '');
    if (data.token && data['ca.crt'] && data.namespace && account.uid === saUid) return;
    const token = data.token || b64(await issueLegacyToken(this.o.keys, this.o.apiDomain, { namespace: ns, secretName: name, serviceAccountName: account.name, serviceAccountUid: saUid }));
    try {
      await this.o.secrets().gs.guaranteedUpdate(ns, name, { dryRun: false, manager: 'kube-controller-manager' }, (cur) => {
        // the Secret as it is now; another writer's change since the informer saw it is kept
        if (!cur || cur.metadata?.uid !== secret.metadata?.uid) throw new StatusError(409, 'Conflict', `secret ${key} changed`);
        const next: ApiObject = { ...cur, metadata: { ...cur.metadata, annotations: { ...(cur.metadata?.annotations ?? {}), [`${prefix}/service-account.uid`]: saUid } } };
        const d = { ...((cur.data ?? {}) as Record<string, string>) };
        // an empty value is filled as a missing one (kube's needsToken and friends)
        if (!d.token) d.token = token;
        if (!d['ca.crt']) d['ca.crt'] = b64(this.o.caPem);
        if (!d.namespace) d.namespace = b64(ns);
        next.data = d;
        return next;
      });
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) {
        if (e.code === 409) this.loop.queue?.addRateLimited(key);
        return;
      }
      throw e;
    }
  }

  private async deleteSecret(ns: string, name: string, uid: string): Promise<void> {
    try {
      await this.o.secrets().gs.delete(ns, name, { dryRun: false, preconditions: { uid } });
      this.o.log?.(`${SA_TOKEN_CONTROLLER}: deleted token secret ${ns}/${name}: its service account does not exist`);
    } catch (e) {
      if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
      throw e;
    }
  }
}
