// The two checks of the field-number audits (test/unit/protobuf-field-numbers*.test.ts;
// docs/protobuf.md "Audit against generated.proto"): protobufjs encodes a hand-built
// message from Kubernetes' numbers, orch must decode it to the expected JSON; orch
// encodes the JSON, and protobufjs must read back the same message.

import type protobuf from 'protobufjs';
import { expect, it } from 'vitest';
import { decodeProtobufObject, encodeProtobufObjectReport } from '../../src/machinery/protobuf/codec.js';
import type { Definitions } from '../../src/machinery/schema/types.js';
import type { ResourceDefinition } from '../../src/registry/types.js';

export interface AuditCase {
  name: string;
  /** the protobufjs message name, e.g. k8s.Pod */
  message: string;
  /** the message as Kubernetes' field numbers lay it out */
  pb: Record<string, unknown>;
  /** what orch must read it as */
  json: Record<string, unknown>;
  /** Go's wire form (zero values written): orch reads it, but writes the JSON's shorter form */
  decodeOnly?: boolean;
}

/** a kind by name and group prefix ('' for core) */
export function builtinKind(kinds: ResourceDefinition[], kind: string, group: string): ResourceDefinition {
  const d = kinds.find((x) => x.kind === kind && (group === '' ? x.group === '' : x.group.startsWith(group)));
  if (!d) throw new Error(`no kind ${group}/${kind}`);
  return d;
}

/** a protobufjs message as a plain object with numbers for int64 and Buffers for bytes */
export function plain(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  return type.toObject(type.decode(bytes), { longs: Number, bytes: Buffer, defaults: false }) as Record<string, unknown>;
}

/** the `it`s of both checks for each case (call inside a describe) */
export function auditCases<C extends AuditCase>(cases: C[], root: protobuf.Root, kindOf: (c: C) => ResourceDefinition, defs: Definitions): void {
  const encodeK8s = (c: C): Uint8Array => {
    const type = root.lookupType(c.message);
    return type.encode(type.fromObject(c.pb)).finish();
  };
  for (const c of cases) {
    it(`decodes Kubernetes bytes: ${c.name}`, () => {
      expect(decodeProtobufObject(encodeK8s(c), kindOf(c), defs)).toEqual(c.json);
    });
    if (c.decodeOnly) continue;
    it(`encodes what Kubernetes reads: ${c.name}`, () => {
      const type = root.lookupType(c.message);
      const { bytes, skipped } = encodeProtobufObjectReport(c.json, kindOf(c), defs);
      expect(skipped).toEqual([]);
      expect(plain(type, bytes)).toEqual(plain(type, encodeK8s(c)));
    });
  }
}
