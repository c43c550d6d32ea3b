// CPU per protobuf encode and decode of a Pod (docs/protobuf.md), in process:
// `npx tsx bench/protobuf-codec.ts [worktree]` loads the codec of the given
// worktree (default: this one), so two worktrees compare A/B, alternating.
// Prints µs of process CPU per operation after a warm-up.

const root = process.argv[2] ?? new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const { builtinDefinitions, builtinSchemaDefinitions } = await import(`${root}/src/registry/kinds/index.ts`);
const { encodeProtobufObjectReport, decodeProtobufObject } = await import(`${root}/src/machinery/protobuf/codec.ts`);
const defs = builtinSchemaDefinitions();
const pod = builtinDefinitions().find((d: { kind: string }) => d.kind === 'Pod');
const obj = {
  metadata: { name: 'web-1', namespace: 'default', uid: 'u-1', resourceVersion: '123', creationTimestamp: '2024-01-02T03:04:05Z', labels: { app: 'web', tier: 'fe' }, annotations: { a: 'b' } },
  spec: {
    containers: [{ name: 'app', image: 'nginx:1.25', ports: [{ containerPort: 80, protocol: 'TCP' }], env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '500m', memory: '128Mi' } },
      readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 10 }, volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }] }],
    volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }], nodeName: 'node-1', restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', schedulerName: 'default-scheduler',
  },
  status: { phase: 'Running', podIP: '10.0.0.5', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z' }] },
};
const N = 100000;
for (let i = 0; i < 20000; i++) decodeProtobufObject(encodeProtobufObjectReport(obj, pod, defs).bytes, pod, defs);
const c0 = process.cpuUsage();
let bytes;
for (let i = 0; i < N; i++) bytes = encodeProtobufObjectReport(obj, pod, defs).bytes;
const c1 = process.cpuUsage(c0);
const d0 = process.cpuUsage();
for (let i = 0; i < N; i++) decodeProtobufObject(bytes, pod, defs);
const d1 = process.cpuUsage(d0);
console.log(`${root.split('/').pop()}: encode ${((c1.user + c1.system) / N).toFixed(2)} µs/op, decode ${((d1.user + d1.system) / N).toFixed(2)} µs/op`);
