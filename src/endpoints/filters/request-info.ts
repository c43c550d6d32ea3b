// RequestInfo from the URL (kube's WithRequestInfo). A malformed path is
// answered 400 by the status filter further in (so the audit and metrics
// filters still see the request); `infoError` carries it there.

import { parseRequestInfo } from '../request-info.js';
import type { Filter } from './state.js';

export const requestInfoFilter: Filter = (s, next) => {
  try {
    // parsed already when the early shedder looked at the request (src/gateway/flowcontrol/early-shed.ts)
    s.info = s.http.info ?? parseRequestInfo(s.http.method, s.http.path, s.http.query);
  } catch (e) {
    s.infoError = e;
  }
  return next(s);
};
