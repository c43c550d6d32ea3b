// Wires the Node authorizer's graph to the object feeds (spec 001 §5.15):
// pods, persistent volume claims and persistent volumes. A resource this
// server does not serve (no PV/PVC kinds) is skipped with a log line: its
// edges simply never exist.

import type { ObjectSources, SourceEvent, SourceObject } from '../types.js';
import { NodeAuthorizer } from './authorizer.js';
import { NodeGraph } from './graph.js';

export { NodeAuthorizer, nodeNameOf } from './authorizer.js';
export { NodeGraph } from './graph.js';

export interface NodeAuthorization {
  authorizer: NodeAuthorizer;
  graph: NodeGraph;
  start(): void;
  stop(): void;
}

export function createNodeAuthorization(opts: {
  sources: ObjectSources;
  apiDomain: string;
  withSelectors: boolean;
  log: (msg: string) => void;
}): NodeAuthorization {
  const graph = new NodeGraph();
  const stops: Array<() => void> = [];
  const feed = (resource: string, set: (o: SourceObject) => void, del: (o: SourceObject) => void): void => {
    let source;
    try {
      source = opts.sources('', resource);
    } catch (e) {
      opts.log(`node authorizer: not following ${resource}: ${(e as Error).message}`);
      return;
    }
    stops.push(source.subscribe((e: SourceEvent) => (e.type === 'DELETED' ? del(e.object) : set(e.object))));
  };
  return {
    graph,
    authorizer: new NodeAuthorizer(graph, { apiDomain: opts.apiDomain, withSelectors: opts.withSelectors }),
    start() {
      if (stops.length > 0) return;
      feed('persistentvolumes', (o) => graph.setPV(o), (o) => graph.deletePV(o));
      feed('persistentvolumeclaims', (o) => graph.setPVC(o), (o) => graph.deletePVC(o));
      feed('pods', (o) => graph.setPod(o), (o) => graph.deletePod(o));
    },
    stop() {
      for (const s of stops.splice(0)) s();
    },
  };
}
