// Loads the agent's proto files (proto/runtime.proto, proto/deviceplugin.proto)
// with protobufjs (as src/raft/transport.ts does for raft.proto) and turns
// their services into grpc-js ServiceDefinitions. Messages travel as plain
// objects with camelCase fields, enums as their names, 64-bit integers as numbers.

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

export const RUNTIME_PACKAGE = 'orch.runtime.v1';

const roots = new Map<string, protobuf.Root>();
function loadRoot(file: string): protobuf.Root {
  let root = roots.get(file);
  if (root) return root;
  // src/nodeagent/runtime/proto.ts and dist/src/nodeagent/runtime/proto.js
  for (const rel of [`../../../proto/${file}`, `../../../../proto/${file}`]) {
    const p = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(p)) {
      root = protobuf.parse(readFileSync(p, 'utf8'), { keepCase: false }).root;
      roots.set(file, root);
      return root;
    }
  }
  throw new Error(`proto/${file} not found`);
}

const CONVERSION: protobuf.IConversionOptions = { longs: Number, enums: String, defaults: true, arrays: true, objects: true };

function codec(type: protobuf.Type) {
  return {
    serialize: (o: object): Buffer => Buffer.from(type.encode(type.fromObject(o)).finish()),
    deserialize: (b: Buffer): object => type.toObject(type.decode(b), CONVERSION),
  };
}

/** a service of `pkg` in proto/`file` as a grpc-js ServiceDefinition */
export function protoService(file: string, pkg: string, service: string): grpc.ServiceDefinition {
  const svc = loadRoot(file).lookupService(`${pkg}.${service}`);
  const def: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of svc.methodsArray) {
    m.resolve();
    const req = codec(m.resolvedRequestType!);
    const res = codec(m.resolvedResponseType!);
    def[m.name] = {
      path: `/${pkg}.${service}/${m.name}`,
      requestStream: !!m.requestStream,
      responseStream: !!m.responseStream,
      requestSerialize: req.serialize,
      requestDeserialize: req.deserialize,
      responseSerialize: res.serialize,
      responseDeserialize: res.deserialize,
    };
  }
  return def;
}

/** `RuntimeService`, `ImageService` or `SimControl` of proto/runtime.proto */
export function serviceDefinition(service: string): grpc.ServiceDefinition {
  return protoService('runtime.proto', RUNTIME_PACKAGE, service);
}

/** names of the calls of a runtime.proto service (the simulator checks it implements all of them) */
export function methodNames(service: string): string[] {
  return loadRoot('runtime.proto').lookupService(`${RUNTIME_PACKAGE}.${service}`).methodsArray.map((m) => m.name);
}
