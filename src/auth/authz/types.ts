import type { UserInfo } from '../types.js';

/** Attributes of a request as the authorizers see them (spec 001 §6). */
export interface RequestAttributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

export type Decision = { decision: 'allow'; reason?: string } | { decision: 'deny' | 'noOpinion'; reason?: string };

export interface Authorizer {
  authorize(attrs: RequestAttributes): Promise<Decision>;
}

/** Until the authorization issue lands every authenticated request is allowed (a warning is printed at start). */
export class AllowAllAuthorizer implements Authorizer {
  async authorize(): Promise<Decision> {
    return { decision: 'allow', reason: 'allow-all authorizer' };
  }
}
