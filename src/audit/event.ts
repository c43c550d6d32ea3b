// Pieces of an audit event that are pure functions of the request: times,
// source addresses, user agent, body decoding, managedFields removal and the
// response status (issue 16 item 3; kube's audit.k8s.io/v1 Event).

import { isIP } from 'node:net';
import { parse as parseYaml } from 'yaml';
import type { UserInfo } from '../auth/types.js';
import type { AuditUser, ResponseStatus } from './types.js';

/** meta/v1 MicroTime: RFC 3339 in UTC with exactly six fractional digits */
export function microTime(us: number): string {
  const ms = Math.floor(us / 1000);
  const frac = String(((us % 1_000_000) + 1_000_000) % 1_000_000).padStart(6, '0');
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}

/** wall-clock microseconds: the epoch of the performance timer plus its fractional milliseconds */
export function systemMicros(): number {
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}

/**
 * kube's SourceIPs: the X-Forwarded-For addresses, then X-Real-Ip if not among
 * them, then the connection's address unless it equals the last one listed.
 * All but the last can be set by the client at will.
 */
export function sourceIPs(headers: Map<string, string>, remoteAddress: string | undefined): string[] {
  const out: string[] = [];
  for (const part of (headers.get('x-forwarded-for') ?? '').split(',')) {
    const ip = normalizeIp(part.trim());
    if (ip) out.push(ip);
  }
  const real = normalizeIp((headers.get('x-real-ip') ?? '').trim());
  if (real && !out.includes(real)) out.push(real);
  const remote = remoteAddress ? normalizeIp(remoteAddress) : undefined;
  if (remote && out[out.length - 1] !== remote) out.push(remote);
  return out;
}

function normalizeIp(s: string): string | undefined {
  if (s === '') return undefined;
  const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (v4mapped) return v4mapped[1];
  return isIP(s) ? s : undefined;
}

const MAX_USER_AGENT = 1024;

export function userAgent(headers: Map<string, string>): string | undefined {
  const ua = headers.get('user-agent');
  if (ua === undefined) return undefined;
  return ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
}

export function auditUser(u: UserInfo | undefined): AuditUser {
  if (!u) return {};
  const out: AuditUser = { username: u.username };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length > 0) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra;
  return out;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * The request body as the event's requestObject: JSON (objects and every JSON
 * patch type) or YAML (including apply patches). Protobuf bodies are decoded
 * by the caller (it knows the kind); bodies that do not decode are left out
 * rather than logged as bytes.
 */
export function decodeBody(body: Uint8Array | undefined, contentType: string): unknown {
  if (!body || body.length === 0) return undefined;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type.includes('protobuf')) return undefined;
  let text: string;
  try {
    text = decoder.decode(body);
  } catch {
    return undefined;
  }
  try {
    if (type.endsWith('yaml')) return parseYaml(text, { maxAliasCount: 100 });
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** a copy without metadata.managedFields, for objects, lists and tables (omitManagedFields) */
export function withoutManagedFields(obj: unknown): unknown {
  if (!isRecord(obj)) return obj;
  let out: Record<string, unknown> = obj;
  const meta = obj.metadata;
  if (isRecord(meta) && 'managedFields' in meta) {
    const { managedFields: _drop, ...rest } = meta;
    out = { ...out, metadata: rest };
  }
  if (Array.isArray(obj.items)) out = { ...out, items: obj.items.map(withoutManagedFields) };
  if (obj.kind === 'Table' && Array.isArray(obj.rows)) {
    out = { ...out, rows: obj.rows.map((r: unknown) => (isRecord(r) && r.object ? { ...r, object: withoutManagedFields(r.object) } : r)) };
  }
  return out;
}

/**
 * The event's responseStatus: a Status body's bounded fields (kube copies
 * status, message, reason, details, code), otherwise just the code.
 */
export function responseStatusOf(code: number, body: unknown): ResponseStatus {
  if (isRecord(body) && body.kind === 'Status') {
    const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
    const status = str(body.status);
    const message = str(body.message);
    const reason = str(body.reason);
    const details = isRecord(body.details) && Object.keys(body.details).length > 0 ? body.details : undefined;
    // key order as kube serialises a Status
    return {
      metadata: {},
      ...(status !== undefined ? { status } : {}),
      ...(message !== undefined ? { message } : {}),
      ...(reason !== undefined ? { reason } : {}),
      ...(details !== undefined ? { details } : {}),
      code,
    };
  }
  return { metadata: {}, code };
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** kube's message for a request whose credentials did not authenticate */
export function authFailureMessage(headers: Map<string, string>, presentedCertificate: boolean, query: URLSearchParams): string {
  const methods: string[] = [];
  const auth = (headers.get('authorization') ?? '').trim();
  const [scheme, rest] = [auth.split(' ')[0] ?? '', auth.split(' ').slice(1).join(' ')];
  if (/^basic$/i.test(scheme) && rest !== '') methods.push('basic');
  if (/^bearer$/i.test(scheme) && rest !== '') methods.push('bearer');
  if ((query.get('access_token') ?? '').trim() !== '') methods.push('access_token');
  if (presentedCertificate) methods.push('x509');
  return methods.length > 0 ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}
