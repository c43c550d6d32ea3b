// The authenticated identity that travels with a request to authorization,
// audit and the managedFields manager (spec 001 §5).
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What the TLS terminator learned about the client's certificate on one connection. */
export interface PeerCertificate {
  /** the chain verified against the configured client CA */
  verified: boolean;
  /** why verification failed, when it did */
  verifyError?: string;
  /** subject common name */
  commonName: string;
  /** subject organizations (in order) */
  organizations: string[];
  /** leaf certificate, DER */
  raw: Uint8Array;
}
