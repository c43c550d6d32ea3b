// Loads proto/runtime.proto with protobufjs (as src/raft/transport.ts does for
// raft.proto) and turns one of its services into a grpc-js ServiceDefinition.
// Messages travel as plain objects with camelCase fields, enums as their
// names and 64-bit integers as numbers.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

export const RUNTIME_PACKAGE = 'orch.runtime.v1';

function loadRoot(): protobuf.Root {
  // src/nodeagent/runtime/proto.ts and dist/src/nodeagent/runtime/proto.js
  for (const rel of ['../../../proto/runtime.proto', '../../../../proto/runtime.proto']) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) return protobuf.parse(readFileSync(p, 'utf8'), { keepCase: false }).root;
  }
  throw new Error('runtime: proto/runtime.proto not found');
}

const root = loadRoot();
const CONVERSION: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

function codec(type: protobuf.Type) {
  return {
    serialize: (o: object): Buffer => Buffer.from(type.encode(type.fromObject(o)).finish()),
    deserialize: (b: Buffer): object => type.toObject(type.decode(b), CONVERSION),
  };
}

/** `RuntimeService`, `ImageService` or `SimControl` of package orch.runtime.v1 */
export function serviceDefinition(service: string): grpc.ServiceDefinition {
  const svc = root.lookupService(`${RUNTIME_PACKAGE}.${service}`);
  const def: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of svc.methodsArray) {
    m.resolve();
    const req = codec(m.resolvedRequestType!);
    const res = codec(m.resolvedResponseType!);
    def[m.name] = {
      path: `/${RUNTIME_PACKAGE}.${service}/${m.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: req.serialize,
      requestDeserialize: req.deserialize,
      responseSerialize: res.serialize,
      responseDeserialize: res.deserialize,
    };
  }
  return def;
}

/** names of the calls of a service (the simulator checks it implements all of them) */
export function methodNames(service: string): string[] {
  return root.lookupService(`${RUNTIME_PACKAGE}.${service}`).methodsArray.map((m) => m.name);
}
