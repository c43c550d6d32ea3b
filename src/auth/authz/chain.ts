// The authorizer chain of spec 001 §5.12 and §3: authorizers are consulted in
// the configured order; the first allow or deny wins, no opinion passes on.
// When nobody decides the chain answers no opinion with every link's reasons
// and errors (kube's union authorizer): the caller denies it (403), or answers
// 500 when a link failed (§5.16). The entries can be swapped atomically, which is how a
// reloaded `--authorization-config` takes effect without a restart.

import type { UserInfo } from '../types.js';
import type { Authorizer, Decision, NonResourceRule, RequestAttributes, ResourceRule, RulesResult } from './types.js';

/** Authorizer types of `--authorization-mode` and AuthorizationConfiguration (§5.12). */
export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'RBAC', 'Node', 'Webhook'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

/** One link of the chain; `name` labels metrics (§5.12: required, unique in the configuration file). */
export interface ChainEntry {
  type: AuthorizationMode | 'SystemMasters';
  name: string;
  authorizer: Authorizer;
}

/** Told of every decision, for metrics; `entry` is undefined when nobody decided. */
export type DecisionObserver = (entry: ChainEntry | undefined, decision: Decision) => void;

export class AuthorizerChain implements Authorizer {
  private entries: readonly ChainEntry[];

  constructor(
    entries: readonly ChainEntry[],
    private readonly observe: DecisionObserver = () => {},
  ) {
    this.entries = entries;
  }

  /** Replace the links at once; requests already being decided finish on the old ones. */
  setEntries(entries: readonly ChainEntry[]): void {
    this.entries = entries;
  }

  current(): readonly ChainEntry[] {
    return this.entries;
  }

  async authorize(attrs: RequestAttributes): Promise<Decision> {
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const entry of this.entries) {
      const d = await entry.authorizer.authorize(attrs);
      // a deciding link answers with its own error only, as kube's union does
      if (d.decision !== 'noOpinion') {
        this.observe(entry, d);
        return d;
      }
      if (d.reason) reasons.push(d.reason);
      if (d.errors) errors.push(...d.errors);
    }
    const none: Decision = { decision: 'noOpinion', reason: reasons.join('\n') || undefined, ...(errors.length ? { errors } : {}) };
    this.observe(undefined, none);
    return none;
  }

  /** The union of what the links can list; incomplete when one of them cannot list its rules; every link's errors. */
  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    let incomplete = false;
    const errors: string[] = [];
    const seen = new Set<string>();
    for (const entry of this.entries) {
      if (!entry.authorizer.rulesFor) {
        incomplete = true;
        continue;
      }
      const r = await entry.authorizer.rulesFor(user, namespace);
      // the same rule from two links (system:masters and cluster-admin through RBAC) is listed once
      const once = <T>(rule: T, into: T[]) => {
        const k = JSON.stringify(rule);
        if (!seen.has(k)) {
          seen.add(k);
          into.push(rule);
        }
      };
      for (const rule of r.resourceRules) once(rule, resourceRules);
      for (const rule of r.nonResourceRules) once(rule, nonResourceRules);
      incomplete ||= r.incomplete;
      if (r.errors) errors.push(...r.errors);
    }
    return { resourceRules, nonResourceRules, incomplete, ...(errors.length ? { errors } : {}) };
  }
}

/** `AlwaysAllow` (insecure, for testing, §5.12). */
export class AlwaysAllowAuthorizer implements Authorizer {
  async authorize(): Promise<Decision> {
    return { decision: 'allow', reason: '' };
  }

  async rulesFor(): Promise<RulesResult> {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    };
  }
}

/** `AlwaysDeny` (for testing, §5.12): an explicit deny, so later links are not asked. */
export class AlwaysDenyAuthorizer implements Authorizer {
  async authorize(): Promise<Decision> {
    return { decision: 'deny', reason: 'Everything is forbidden.' };
  }

  async rulesFor(): Promise<RulesResult> {
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

/**
 * Members of the privileged group bypass every other authorizer (§5.14:
 * "Members of system:masters bypass RBAC and webhook restrictions"); kube puts
 * this link first whatever the modes are.
 */
export class PrivilegedGroupAuthorizer implements Authorizer {
  constructor(private readonly group = 'system:masters') {}

  async authorize(attrs: RequestAttributes): Promise<Decision> {
    return attrs.user.groups.includes(this.group) ? { decision: 'allow', reason: '' } : { decision: 'noOpinion' };
  }

  async rulesFor(user: UserInfo): Promise<RulesResult> {
    if (!user.groups.includes(this.group)) return { resourceRules: [], nonResourceRules: [], incomplete: false };
    return new AlwaysAllowAuthorizer().rulesFor();
  }
}

/**
 * Parses `--authorization-mode` (§5.12): a comma list of known modes, each at
 * most once. Throws an Error whose message names the flag and the bad value.
 */
export function parseAuthorizationModes(flag: string): AuthorizationMode[] {
  const modes = flag
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (modes.length === 0) throw new Error('--authorization-mode: at least one mode is required');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) {
      throw new Error(`--authorization-mode: unknown mode "${m}" (known: ${AUTHORIZATION_MODES.join(', ')})`);
    }
    if (seen.has(m)) throw new Error(`--authorization-mode: "${m}" is listed twice`);
    seen.add(m);
  }
  return modes as AuthorizationMode[];
}
