// Errors become Kubernetes `Status` responses in the negotiated
// representation (spec 000 §7), lower-layer errors through the one table of
// src/registry/status-table.ts; anything else is logged and answered 500
// (kube's WithPanicRecovery), and the audit event records the failure.

import { internalError } from '../../core/errors.js';
import { statusFor } from '../../registry/status-table.js';
import type { Encoder } from '../encode.js';
import type { Filter } from './state.js';

export function statusFilter(respond: Encoder, log?: (msg: string) => void): Filter {
  return async (s, next) => {
    try {
      // a malformed URL is a 400 answered here, inside audit and metrics
      if (!s.info) throw s.infoError;
      return await next(s);
    } catch (e) {
      const status = statusFor(e);
      if (status) return respond(status.code, status.toStatus(), s.accept, status.warnings, false, status.headers);
      log?.(`unexpected error serving ${s.http.method} ${s.http.path}: ${(e as Error)?.stack ?? String(e)}`);
      const err = internalError((e as Error)?.message ?? String(e));
      s.audit?.panicked(err.message);
      return respond(err.code, err.toStatus(), s.accept);
    }
  };
}
