// Admission cost on the write path: creates per second of a ConfigMap and of a
// custom resource (a CRD `widgets.bench.example.com` with a structural schema)
// through the HTTPS API of one orch server (a separate process,
// --tls-workers 0), in the same run, each with
//   plain              no admission configuration at all
//   validatingWebhook  one ValidatingWebhookConfiguration matching every
//                      ConfigMap create; the webhook (Node https, its own CA
//                      passed as caBundle) runs in this process and allows
//   mutatingWebhook    one MutatingWebhookConfiguration adding a label by
//                      JSONPatch (the patched object is validated again)
//   celPolicy          one ValidatingAdmissionPolicy (two CEL validations)
//                      bound with validationActions [Deny]; all pass
// Each phase: `writes` creates of a 1 KiB ConfigMap (or Widget), `inFlight` at a time,
// over keep-alive connections with the admin client certificate.
//
//   npx tsx bench/admission.ts [writes=2000] [inFlight=64]
//
// Prints one JSON document: per phase opsPerSec, p50Ms, p99Ms (ConfigMaps under
// the phase's name, custom resources under `customResource`), and each phase's
// throughput relative to the plain ConfigMap. The host is shared (2 cores), so
// throughput moves by ±30% between runs; compare phases within one run.

import { freePort } from '../test/helpers/ports.js';
import { startAdmissionWebhook } from '../test/helpers/admission-webhook.js';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DriveStats as Stats, drive, sleep } from './drive.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const writes = Number(process.argv[2] ?? 2000);
const inFlight = Number(process.argv[3] ?? 64);

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'orch-bench-admission-'));
  const port = await freePort();
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'server', '--data-dir', join(root, 'data'), '--secure-port', String(port), '--tls-workers', '0'], {
    cwd: REPO,
    stdio: process.env.BENCH_MEMBER_LOGS ? 'inherit' : 'ignore',
  });
  const hook = await startAdmissionWebhook(root);
  try {
    const pki = join(root, 'data', 'pki');
    let agent: Agent | undefined;
    const call = (method: string, path: string, body: unknown, expect: number[]): Promise<string> =>
      new Promise((resolve, reject) => {
        const data = body === undefined ? '' : JSON.stringify(body);
        const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            if (expect.includes(res.statusCode ?? 0)) resolve(text);
            else reject(new Error(`${method} ${path}: status ${res.statusCode}: ${text.slice(0, 300)}`));
          });
        });
        req.on('error', reject);
        req.end(data);
      });
    for (let attempt = 0; attempt < 300 && !agent; attempt++) {
      try {
        const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
        const a = new Agent({ keepAlive: true, maxSockets: inFlight, ca, cert, key });
        agent = a;
        await call('GET', '/readyz', undefined, [200]);
      } catch {
        agent?.destroy();
        agent = undefined;
        await sleep(200);
      }
    }
    if (!agent) throw new Error('orch server did not become ready');
    const AR = '/apis/admissionregistration.orch.io/v1';
    const rules = [
      { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
      { operations: ['CREATE'], apiGroups: ['bench.example.com'], apiVersions: ['v1'], resources: ['widgets'] },
    ];
    // the custom kind: a structural schema with a default, served before the first phase
    await call('POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', {
      metadata: { name: 'widgets.bench.example.com' },
      spec: {
        group: 'bench.example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { v: { type: 'string', maxLength: 4096 }, size: { type: 'integer', default: 1, minimum: 0 } } } } } },
        }],
      },
    }, [201]);
    for (let attempt = 0; ; attempt++) {
      try {
        await call('GET', '/apis/bench.example.com/v1/namespaces/default/widgets', undefined, [200]);
        break;
      } catch (e) {
        if (attempt > 100) throw e;
        await sleep(100);
      }
    }
    const webhook = (path: string) => ({ name: `bench${path.replace('/', '.')}.orch.test`, clientConfig: { url: hook.url(path), caBundle: hook.caBundle }, rules, sideEffects: 'None', admissionReviewVersions: ['v1'] });
    hook.on.set('/mutate', { allowed: true, patch: [{ op: 'add', path: '/metadata/labels', value: { benched: 'yes' } }] });
    const value = 'x'.repeat(1024);
    const creates = async (name: string): Promise<Stats> => {
      // a short warm-up so connection set-up and JIT do not count
      await drive(Math.min(200, writes), inFlight, (i) => call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `w-${name}-${i}` }, data: { v: value } }, [201]).then(() => undefined));
      return drive(writes, inFlight, (i) => call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `${name}-${i}` }, data: { v: value } }, [201]).then(() => undefined));
    };
    const widgetPath = '/apis/bench.example.com/v1/namespaces/default/widgets';
    const widget = (name: string) => ({ apiVersion: 'bench.example.com/v1', kind: 'Widget', metadata: { name }, spec: { v: value } });
    const customResource: Record<string, Stats> = {};
    const phase = async (name: string): Promise<Stats> => {
      const cm = await creates(name);
      await drive(Math.min(200, writes), inFlight, (i) => call('POST', widgetPath, widget(`w-${name}-${i}`), [201]).then(() => undefined));
      customResource[name] = await drive(writes, inFlight, (i) => call('POST', widgetPath, widget(`${name}-${i}`), [201]).then(() => undefined));
      return cm;
    };
    const out: Record<string, Stats> = {};
    out.plain = await phase('plain');
    await call('POST', `${AR}/validatingwebhookconfigurations`, { metadata: { name: 'bench' }, webhooks: [webhook('/allow')] }, [201]);
    const seenBefore = hook.seen.length;
    out.validatingWebhook = await phase('vwh');
    const webhookCalls = hook.seen.length - seenBefore;
    hook.seen.length = 0;
    await call('DELETE', `${AR}/validatingwebhookconfigurations/bench`, undefined, [200]);
    await call('POST', `${AR}/mutatingwebhookconfigurations`, { metadata: { name: 'bench' }, webhooks: [webhook('/mutate')] }, [201]);
    out.mutatingWebhook = await phase('mwh');
    hook.seen.length = 0;
    await call('DELETE', `${AR}/mutatingwebhookconfigurations/bench`, undefined, [200]);
    await call('POST', `${AR}/validatingadmissionpolicies`, {
      metadata: { name: 'bench' },
      spec: {
        matchConstraints: { resourceRules: rules },
        validations: [{ expression: 'object.metadata.name.size() <= 63' }, { expression: "!has(object.metadata.labels) || !('forbidden' in object.metadata.labels)", message: 'forbidden label' }],
      },
    }, [201]);
    await call('POST', `${AR}/validatingadmissionpolicybindings`, { metadata: { name: 'bench' }, spec: { policyName: 'bench', validationActions: ['Deny'] } }, [201]);
    // the policy is in force: a create it refuses
    await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'refused', labels: { forbidden: 'x' } }, data: {} }, [422]);
    out.celPolicy = await phase('cel');
    agent.destroy();
    const rel = (s: Stats) => +(s.opsPerSec / out.plain!.opsPerSec).toFixed(3);
    process.stdout.write(
      `${JSON.stringify(
        {
          writes,
          inFlight,
          valueBytes: value.length,
          webhookCallsDuringValidatingPhase: webhookCalls,
          ...out,
          customResource: { plain: customResource.plain, validatingWebhook: customResource.vwh, mutatingWebhook: customResource.mwh, celPolicy: customResource.cel },
          relativeToPlain: { validatingWebhook: rel(out.validatingWebhook!), mutatingWebhook: rel(out.mutatingWebhook!), celPolicy: rel(out.celPolicy!) },
          customResourceRelativeToPlainConfigMap: {
            plain: rel(customResource.plain!),
            validatingWebhook: rel(customResource.vwh!),
            mutatingWebhook: rel(customResource.mwh!),
            celPolicy: rel(customResource.cel!),
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await hook.close();
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode !== null ? r(undefined) : server.once('exit', r)));
    await rm(root, { recursive: true, force: true });
  }
}

await main();
