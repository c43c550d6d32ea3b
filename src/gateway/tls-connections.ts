// The TLS front's connection registry: connection id (the PROXY v2 source
// address, src/gateway/proxy-v2.ts) → the TLS socket and who is on it.
//
// This sits on the watch fan-out path (many long-lived connections), so the
// per-connection state is one map entry holding the socket; the client
// certificate is decoded lazily on the first lookup and then cached (spec
// 001_bdb487117be0ea8a.txt §5.3: CN = user name, O = groups).
import type { TLSSocket } from 'node:tls';
import type { Clock } from '../core/clock.js';
import type { PeerCertificate } from '../auth/types.js';
import { canonicalKey } from './proxy-v2.js';

export interface TlsConnectionInfo {
  /** the client's real address, for audit and logs */
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  peer: PeerCertificate | undefined;
}

interface Connection {
  socket: TLSSocket;
  /** undefined = not decoded yet; null = no certificate presented */
  peer: PeerCertificate | null | undefined;
}

export class TlsConnectionRegistry {
  private readonly connections = new Map<string, Connection>();

  /**
   * `hasClientCA`: whether a client CA bundle is configured (without one no
   * certificate verifies); `clock`: for the expiry check of resumed sessions
   */
  constructor(
    private readonly hasClientCA: boolean,
    private readonly clock: Clock,
  ) {}

  get size(): number {
    return this.connections.size;
  }

  add(key: string, socket: TLSSocket): void {
    this.connections.set(key, { socket, peer: undefined });
  }

  delete(key: string): void {
    this.connections.delete(key);
  }

  /** the client certificate of the connection named by any textual form of its id */
  peerFor(text: string): PeerCertificate | undefined {
    const c = this.lookup(text);
    return c ? this.peerOf(c) : undefined;
  }

  connectionFor(text: string): TlsConnectionInfo | undefined {
    const c = this.lookup(text);
    return c ? this.infoOf(c) : undefined;
  }

  /** what is known of a connection registered under its canonical key (the TLS workers send this to the parent) */
  infoFor(key: string): TlsConnectionInfo | undefined {
    const c = this.connections.get(key);
    return c ? this.infoOf(c) : undefined;
  }

  destroyAll(): void {
    for (const c of this.connections.values()) c.socket.destroy();
  }

  private infoOf(c: Connection): TlsConnectionInfo {
    return { remoteAddress: c.socket.remoteAddress, remotePort: c.socket.remotePort, peer: this.peerOf(c) };
  }

  private peerOf(c: Connection): PeerCertificate | undefined {
    if (c.peer === undefined) c.peer = decodePeer(c.socket, this.hasClientCA, this.clock.now());
    return c.peer ?? undefined;
  }

  private lookup(text: string): Connection | undefined {
    const direct = this.connections.get(text);
    if (direct) return direct;
    const key = canonicalKey(text);
    return key === undefined || key === text ? undefined : this.connections.get(key);
  }
}

/** What the handshake established about the client certificate, or null when none was presented. */
function decodePeer(socket: TLSSocket, hasClientCA: boolean, now: number): PeerCertificate | null {
  const cert = socket.getPeerCertificate(false);
  if (!cert || !cert.raw) return null;
  const subject = (cert.subject ?? {}) as unknown as Record<string, string | string[] | undefined>;
  let verified = hasClientCA && socket.authorized;
  let verifyError: string | undefined;
  if (!hasClientCA) verifyError = 'no client certificate authority configured';
  else if (!verified) verifyError = String(socket.authorizationError ?? 'certificate not verified');
  else if (socket.isSessionReused() && !(now < Date.parse(cert.valid_to))) {
    // A resumed session carries the verification of its first handshake
    // (OpenSSL keeps it in the ticket); a certificate that has expired since
    // must not live on in tickets (Go's server refuses such resumptions too).
    verified = false;
    verifyError = 'certificate has expired';
  }
  return {
    verified,
    ...(verifyError !== undefined ? { verifyError } : {}),
    commonName: firstValue(subject['CN']) ?? '',
    organizations: allValues(subject['O']),
    raw: new Uint8Array(cert.raw),
  };
}

function firstValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function allValues(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? [...v] : [v];
}
