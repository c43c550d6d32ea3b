// Read access to stored objects for authenticators that check the API
// (service-account lookup §5.5, bootstrap-token Secrets §5.4). Reads are
// local and synchronous: the store's current state, no request round trip.
import type { ApiObject } from '../../registry/types.js';

/** core-group objects by plural resource name (namespace '' for Nodes); undefined when absent */
export type ObjectGetter = (resource: 'serviceaccounts' | 'secrets' | 'pods' | 'configmaps' | 'nodes', namespace: string, name: string) => ApiObject | undefined;
