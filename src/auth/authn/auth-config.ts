// Structured authentication configuration (spec 001 §5.6, §5.9, §8):
// `AuthenticationConfiguration` of `apiserver.config.<domain>/v1beta1`, read
// from `--authentication-config`. Everything is validated and every CEL
// expression compiled at load time; errors carry the field path
// (`jwt[0].claimMappings.username.expression: ...`) so a bad file is refused at
// start and a bad reload keeps the previous configuration.

import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { CelCompileError, type CompiledExpression, compileCel } from './cel.js';
import type { ClaimOrExpression, JwtAuthenticatorConfig } from './jwt.js';

export const MAX_JWT_AUTHENTICATORS = 64;

export interface AnonymousConfig {
  enabled: boolean;
  /** when non-empty, anonymous requests are allowed only on these paths */
  paths: string[];
}

export interface AuthenticationConfig {
  jwt: JwtAuthenticatorConfig[];
  anonymous?: AnonymousConfig;
}

export class AuthenticationConfigError extends Error {
  constructor(
    readonly file: string,
    readonly errors: string[],
  ) {
    super(`${file}: invalid AuthenticationConfiguration: ${errors.join('; ')}`);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

export function loadAuthenticationConfig(path: string, opts: { apiDomain: string; serviceAccountIssuers: string[] }): AuthenticationConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AuthenticationConfigError(path, [`cannot read: ${(e as Error).message}`]);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (e) {
    throw new AuthenticationConfigError(path, [`not valid YAML/JSON: ${(e as Error).message.split('\n')[0]}`]);
  }
  return parseAuthenticationConfig(doc, path, opts);
}

export function parseAuthenticationConfig(doc: unknown, file: string, opts: { apiDomain: string; serviceAccountIssuers: string[] }): AuthenticationConfig {
  const errs: string[] = [];
  const err = (field: string, msg: string): void => void errs.push(`${field}: ${msg}`);
  if (!isObj(doc)) throw new AuthenticationConfigError(file, ['the file must hold an AuthenticationConfiguration object']);
  const versions = [`apiserver.config.${opts.apiDomain}/v1beta1`, 'apiserver.config.k8s.io/v1beta1'];
  if (!versions.includes(String(doc.apiVersion))) err('apiVersion', `Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: "${versions[0]}"`);
  if (doc.kind !== 'AuthenticationConfiguration') err('kind', `Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "AuthenticationConfiguration"`);
  const known = new Set(['apiVersion', 'kind', 'jwt', 'anonymous']);
  for (const k of Object.keys(doc)) if (!known.has(k)) err(k, 'unknown field');
  const compile = (src: unknown, vars: string[], field: string): CompiledExpression | undefined => {
    try {
      return compileCel(src as string, vars, field);
    } catch (e) {
      errs.push(e instanceof CelCompileError ? e.message.replace(': Invalid value: ', ': ') : `${field}: ${(e as Error).message}`);
      return undefined;
    }
  };
  const jwts: JwtAuthenticatorConfig[] = [];
  const jwtList = doc.jwt ?? [];
  if (!Array.isArray(jwtList)) err('jwt', 'must be a list');
  else {
    if (jwtList.length > MAX_JWT_AUTHENTICATORS) err('jwt', `Too many: ${jwtList.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`);
    const urls = new Set<string>();
    const discoveryURLs = new Set<string>();
    jwtList.forEach((j: unknown, i) => {
      const p = `jwt[${i}]`;
      if (!isObj(j)) return err(p, 'must be an object');
      const issuer = isObj(j.issuer) ? j.issuer : {};
      if (!isObj(j.issuer)) err(`${p}.issuer`, 'Required value');
      const url = issuer.url;
      if (typeof url !== 'string' || url === '') err(`${p}.issuer.url`, 'Required value');
      else {
        if (!/^https:\/\//.test(url)) err(`${p}.issuer.url`, `Invalid value: ${JSON.stringify(url)}: URL scheme must be https`);
        if (urls.has(url)) err(`${p}.issuer.url`, `Duplicate value: ${JSON.stringify(url)}`);
        if (opts.serviceAccountIssuers.includes(url)) err(`${p}.issuer.url`, `Invalid value: ${JSON.stringify(url)}: URL must not overlap with --service-account-issuer`);
        urls.add(url);
      }
      const d = issuer.discoveryURL;
      if (d !== undefined && d !== '') {
        if (typeof d !== 'string' || !/^https:\/\//.test(d)) err(`${p}.issuer.discoveryURL`, 'Invalid value: discovery URL must use https');
        else {
          if (d === url) err(`${p}.issuer.discoveryURL`, 'Invalid value: discoveryURL must be different from URL');
          if (discoveryURLs.has(d)) err(`${p}.issuer.discoveryURL`, `Duplicate value: ${JSON.stringify(d)}`);
          discoveryURLs.add(d);
        }
      }
      const ca = issuer.certificateAuthority;
      if (ca !== undefined && (typeof ca !== 'string' || !ca.includes('-----BEGIN CERTIFICATE-----'))) err(`${p}.issuer.certificateAuthority`, 'Invalid value: must be PEM certificates');
      const aud = issuer.audiences;
      if (!Array.isArray(aud) || aud.length === 0) err(`${p}.issuer.audiences`, 'Required value: at least one audience');
      else if (aud.some((a) => typeof a !== 'string' || a === '')) err(`${p}.issuer.audiences`, 'Invalid value: audiences must be non-empty strings');
      const policy = issuer.audienceMatchPolicy;
      if (Array.isArray(aud) && aud.length > 1 && policy !== 'MatchAny') err(`${p}.issuer.audienceMatchPolicy`, 'Invalid value: audienceMatchPolicy must be MatchAny for multiple audiences');
      if (policy !== undefined && policy !== '' && policy !== 'MatchAny') err(`${p}.issuer.audienceMatchPolicy`, `Unsupported value: ${JSON.stringify(policy)}: supported values: "MatchAny"`);

      const rules: JwtAuthenticatorConfig['claimValidationRules'] = [];
      const cvr = j.claimValidationRules ?? [];
      if (!Array.isArray(cvr)) err(`${p}.claimValidationRules`, 'must be a list');
      else
        cvr.forEach((r: unknown, k) => {
          const rp = `${p}.claimValidationRules[${k}]`;
          if (!isObj(r)) return err(rp, 'must be an object');
          const hasClaim = r.claim !== undefined && r.claim !== '';
          const hasExpr = r.expression !== undefined && r.expression !== '';
          if (hasClaim === hasExpr) return err(rp, 'exactly one of claim or expression must be set');
          if (hasClaim) {
            if (typeof r.requiredValue !== 'string') return err(`${rp}.requiredValue`, 'Required value');
            rules.push({ claim: String(r.claim), requiredValue: r.requiredValue });
          } else {
            const e = compile(r.expression, ['claims'], `${rp}.expression`);
            if (e) rules.push({ expression: e, message: typeof r.message === 'string' ? r.message : '' });
          }
        });

      const cm = isObj(j.claimMappings) ? j.claimMappings : undefined;
      if (!cm) err(`${p}.claimMappings`, 'Required value');
      const mapping = (m: unknown, mp: string, prefixRequired: boolean, required: boolean): ClaimOrExpression | undefined => {
        if (m === undefined || m === null) {
          if (required) err(mp, 'Required value');
          return undefined;
        }
        if (!isObj(m)) return void err(mp, 'must be an object');
        const hasClaim = m.claim !== undefined && m.claim !== '';
        const hasExpr = m.expression !== undefined && m.expression !== '';
        if (hasClaim === hasExpr) {
          if (!hasClaim && !required) return undefined;
          return void err(mp, 'exactly one of claim or expression must be set');
        }
        if (hasClaim) {
          if (prefixRequired && typeof m.prefix !== 'string') return void err(`${mp}.prefix`, 'Required value: prefix is required when claim is set (it may be "")');
          return { claim: String(m.claim), ...(typeof m.prefix === 'string' ? { prefix: m.prefix } : {}) };
        }
        if (m.prefix !== undefined) err(`${mp}.prefix`, 'Invalid value: may not be specified when expression is set');
        const e = compile(m.expression, ['claims'], `${mp}.expression`);
        return e ? { expression: e } : undefined;
      };
      const username = mapping(cm?.username, `${p}.claimMappings.username`, true, true);
      const groups = mapping(cm?.groups, `${p}.claimMappings.groups`, true, false);
      const uid = mapping(cm?.uid, `${p}.claimMappings.uid`, false, false);
      const extra: JwtAuthenticatorConfig['claimMappings']['extra'] = [];
      const keys = new Set<string>();
      const ex = cm?.extra ?? [];
      if (!Array.isArray(ex)) err(`${p}.claimMappings.extra`, 'must be a list');
      else
        ex.forEach((x: unknown, k) => {
          const xp = `${p}.claimMappings.extra[${k}]`;
          if (!isObj(x)) return err(xp, 'must be an object');
          const key = x.key;
          if (typeof key !== 'string' || key === '') return err(`${xp}.key`, 'Required value');
          if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/\S+$/.test(key)) err(`${xp}.key`, `Invalid value: ${JSON.stringify(key)}: must be a domain-prefixed path such as "example.org/foo"`);
          if (key !== key.toLowerCase()) err(`${xp}.key`, `Invalid value: ${JSON.stringify(key)}: must be lowercase`);
          const domain = key.split('/')[0]!;
          for (const reserved of [opts.apiDomain, 'k8s.io', 'kubernetes.io']) {
            if (domain === reserved || domain.endsWith(`.${reserved}`)) err(`${xp}.key`, `Invalid value: ${JSON.stringify(key)}: the ${reserved} domain is reserved`);
          }
          if (keys.has(key)) err(`${xp}.key`, `Duplicate value: ${JSON.stringify(key)}`);
          keys.add(key);
          const e = compile(x.valueExpression, ['claims'], `${xp}.valueExpression`);
          if (e) extra.push({ key, valueExpression: e });
        });
      // claims.email as user name must be backed by an email_verified check (§5.6)
      const sources = [username, ...rules].map((r) => (r && 'expression' in r ? r.expression.source : '')).join('\n');
      if (username && 'expression' in username && /claims\.email\b(?!_)/.test(username.expression.source) && !/email_verified/.test(sources)) {
        err(`${p}.claimMappings.username.expression`, 'Invalid value: claims.email_verified must be used in claimMappings.username.expression or claimValidationRules[].expression when claims.email is used');
      }
      const uvr: JwtAuthenticatorConfig['userValidationRules'] = [];
      const uv = j.userValidationRules ?? [];
      if (!Array.isArray(uv)) err(`${p}.userValidationRules`, 'must be a list');
      else
        uv.forEach((r: unknown, k) => {
          const rp = `${p}.userValidationRules[${k}]`;
          if (!isObj(r)) return err(rp, 'must be an object');
          const e = compile(r.expression, ['user'], `${rp}.expression`);
          if (e) uvr.push({ expression: e, message: typeof r.message === 'string' ? r.message : '' });
        });
      if (typeof url === 'string' && Array.isArray(aud) && username) {
        jwts.push({
          issuer: {
            url,
            ...(typeof d === 'string' && d !== '' ? { discoveryURL: d } : {}),
            ...(typeof ca === 'string' ? { certificateAuthority: ca } : {}),
            audiences: aud as string[],
          },
          claimValidationRules: rules,
          claimMappings: {
            username,
            ...(groups ? { groups } : {}),
            ...(uid ? { uid: uid as { claim: string } | { expression: CompiledExpression } } : {}),
            extra,
          },
          userValidationRules: uvr,
          signingAlgs: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'],
        });
      }
    });
  }
  let anonymous: AnonymousConfig | undefined;
  if (doc.anonymous !== undefined) {
    const a = doc.anonymous;
    if (!isObj(a)) err('anonymous', 'must be an object');
    else {
      if (typeof a.enabled !== 'boolean') err('anonymous.enabled', 'Required value: true or false');
      const paths: string[] = [];
      const conds = a.conditions ?? [];
      if (!Array.isArray(conds)) err('anonymous.conditions', 'must be a list');
      else
        conds.forEach((c: unknown, k) => {
          if (!isObj(c) || typeof c.path !== 'string' || c.path === '') return err(`anonymous.conditions[${k}].path`, 'Required value');
          if (paths.includes(c.path)) err(`anonymous.conditions[${k}].path`, `Duplicate value: ${JSON.stringify(c.path)}`);
          paths.push(c.path);
        });
      if (a.enabled === false && paths.length > 0) err('anonymous.conditions', 'Invalid value: enabled should be true when conditions are defined');
      anonymous = { enabled: a.enabled === true, paths };
    }
  }
  if (errs.length > 0) throw new AuthenticationConfigError(file, errs);
  return { jwt: jwts, ...(anonymous ? { anonymous } : {}) };
}
