// The review kinds of `authentication.<domain>` (spec 001 §2.3, §4, §9):
// TokenReview (v1, v1beta1) runs the server's token authenticators on a token
// given in the body; SelfSubjectReview (v1) reports how the server mapped the
// caller. Both are virtual: `create` answers and nothing is stored. They serve
// `create` as a capability (src/registry/capabilities.ts): the endpoint layer
// decodes the body and hands over the object.

import { badRequest } from '../../core/errors.js';
import { atomicList, bool, mapOf, obj, proto, str } from '../../machinery/schema/dsl.js';
import { kindSchema } from '../../registry/kinds/meta.js';
import type { SchemaNames } from '../../machinery/schema/naming.js';
import type { Schema } from '../../machinery/schema/types.js';
import type { ResourceDefinition } from '../../registry/types.js';
import { withAuthenticatedGroup } from '../authn/chain.js';
import type { TokenAuthenticator } from '../authn/token.js';
import type { UserInfo } from '../types.js';

export function authenticationGroup(apiDomain: string): string {
  return `authentication.${apiDomain}`;
}

const strList = (d: string): Schema => atomicList(d, { type: 'string' });

function userInfoSchema(description: string): Schema {
  // protobuf numbers (authentication/v1 UserInfo; extra values are ExtraValue { items = 1 }): spec 000 §2.7
  return obj(description, proto({ username: 1, uid: 2, groups: 3, extra: 4 }, {
    username: str('The name that uniquely identifies this user among all active users.'),
    uid: str('A unique value that identifies this user across time.'),
    groups: strList('The names of groups this user is a part of.'),
    extra: mapOf('Any additional information provided by the authenticator.', { type: 'array', items: { type: 'string' } }),
  }));
}

/** the wire form of a user: `extra` and `uid` only when set */
export function userInfoJson(u: UserInfo): Record<string, unknown> {
  return {
    username: u.username,
    ...(u.uid !== undefined && u.uid !== '' ? { uid: u.uid } : {}),
    groups: [...u.groups],
    ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}),
  };
}

export function tokenReviewDefinitions(n: SchemaNames, tokens: TokenAuthenticator): ResourceDefinition[] {
  const group = authenticationGroup(n.apiDomain);
  return ['v1', 'v1beta1'].map((version) => ({
    group,
    version,
    kind: 'TokenReview',
    resource: 'tokenreviews',
    singular: 'tokenreview',
    scope: 'Cluster' as const,
    verbs: ['create'],
    schema: kindSchema(
      n,
      'TokenReview attempts to authenticate a token to a known user.',
      proto({ spec: 2, status: 3 }, {
        spec: obj('Information about the request being evaluated.', proto({ token: 1, audiences: 2 }, {
          token: str('The opaque bearer token.'),
          audiences: strList('Audiences the resource server identified by the token must be valid for.'),
        })),
        status: obj('Filled in by the server: whether the request can be authenticated.', proto({ authenticated: 1, user: 2, error: 3, audiences: 4 }, {
          authenticated: bool('Whether the token is associated with a known user.'),
          user: userInfoSchema('The UserInfo associated with the provided token.'),
          audiences: strList('Audiences the token is valid for (a subset of spec.audiences).'),
          error: str('Why the token could not be checked.'),
        })),
      }),
      ['spec'],
    ),
    strategy: {},
    capabilities: {
      '': {
        async create(_ctx, review) {
          const spec = (review.spec ?? {}) as { token?: unknown; audiences?: unknown };
          if (typeof spec.token !== 'string' || spec.token === '') throw badRequest('token is required for TokenReview in authentication'); // kube's tokenreview REST, word for word
          const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
          const r = await tokens.authenticateToken(spec.token, audiences);
          // as kube's TokenReview, which runs the server's authenticator (group.NewAuthenticatedGroupAdder
          // included): the user has `system:authenticated` as on a request
          const status: Record<string, unknown> =
            r.result === 'ok'
              ? { authenticated: true, user: userInfoJson(withAuthenticatedGroup(r.user)), audiences: r.audiences ?? audiences }
              : { user: {}, ...(r.result === 'error' ? { error: r.message } : {}) };
          // the token is not echoed back: the response may be logged
          return {
            status: 201,
            object: { apiVersion: review.apiVersion, kind: 'TokenReview', metadata: { creationTimestamp: null }, spec: audiences.length > 0 ? { audiences } : {}, status },
          };
        },
      },
    },
  }));
}

export function selfSubjectReviewDefinition(n: SchemaNames): ResourceDefinition {
  return {
    group: authenticationGroup(n.apiDomain),
    version: 'v1',
    kind: 'SelfSubjectReview',
    resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    scope: 'Cluster',
    verbs: ['create'],
    schema: kindSchema(n, 'SelfSubjectReview contains the user information the server has about the user making the request.', proto({ status: 2 }, {
      status: obj('Filled in by the server with the user attributes.', proto({ userInfo: 1 }, {
        userInfo: userInfoSchema('The attributes of the user making this request.'),
      })),
    })),
    strategy: {},
    capabilities: {
      '': {
        // the body carries only apiVersion and kind (§4): decoded for the type checks when sent
        body: { optional: true },
        async create(ctx) {
          return {
            status: 201,
            object: {
              apiVersion: `${authenticationGroup(n.apiDomain)}/v1`,
              kind: 'SelfSubjectReview',
              metadata: { creationTimestamp: null },
              status: { userInfo: userInfoJson(ctx.user) },
            },
          };
        },
      },
    },
  };
}
