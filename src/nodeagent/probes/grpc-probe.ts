// kubelet's gRPC prober (pkg/probe/grpc): grpc.health.v1.Health/Check over a
// plain-text connection (proto/grpc-health.proto), the User-Agent
// kube-probe/1.32, one deadline for connecting and the call, and kubelet's
// texts for each way it ends.

import * as grpc from '@grpc/grpc-js';
import { goDuration } from '../events/kubelet-events.js';
import { RuntimeCallError } from '../runtime/client.js';
import { protoService } from '../runtime/proto.js';
import { systemClock } from '../clock.js';
import { PROBE_USER_AGENT } from './net-probes.js';
import { joinHostPort, type Outcome } from './types.js';

type Check = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: { status?: string }) => void) => void;
let HealthClient: grpc.ServiceClientConstructor | undefined;

export function grpcProbe(host: string, port: number, service: string, timeoutMs: number): Promise<Outcome> {
  HealthClient ??= grpc.makeGenericClientConstructor(protoService('grpc-health.proto', 'grpc.health.v1', 'Health'), 'Health');
  const addr = joinHostPort(host, port);
  const client = new HealthClient(addr, grpc.credentials.createInsecure(), { 'grpc.primary_user_agent': PROBE_USER_AGENT }) as unknown as grpc.Client & { Check: Check };
  // a real socket's deadline: real time, whatever clock schedules the prober
  const deadline = systemClock.now() + timeoutMs;
  const timeout = goDuration(timeoutMs);
  return new Promise<Outcome>((resolve) => {
    // grpc.WithBlock: wait for the connection first, so a refused one is told apart from a slow call
    client.waitForReady(deadline, (err) => {
      if (err) return resolve({ result: 'failure', output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${timeout}: context deadline exceeded` });
      client.Check({ service }, new grpc.Metadata(), { deadline }, (e, res) => {
        if (e) {
          if (e.code === grpc.status.UNIMPLEMENTED) return resolve({ result: 'failure', output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${e.details}` });
          if (e.code === grpc.status.DEADLINE_EXCEEDED) return resolve({ result: 'failure', output: `timeout: health rpc did not complete within ${timeout}` });
          return resolve({ result: 'failure', output: `error: health rpc probe failed: ${new RuntimeCallError('Check', e.code, e.details).goError}` });
        }
        const status = res?.status ?? 'UNKNOWN';
        if (status !== 'SERVING') return resolve({ result: 'failure', output: `service unhealthy (responded with ${JSON.stringify(status)})` });
        resolve({ result: 'success', output: 'service healthy' });
      });
    });
  }).finally(() => client.close());
}
