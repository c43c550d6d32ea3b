// Admission as a new user meets it: kubectl 1.32 applies a
// ValidatingAdmissionPolicy and binding from a manifest (the shape of the
// Kubernetes documentation's example), lists them, and sees a refusal and a
// warning on its own writes; a webhook configuration with a broken CEL
// condition is refused with the field named.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { runKubectl } from '../helpers/kubectl.js';

let ts: TestServer;
const k = (...args: string[]) => runKubectl(ts.server.kubeconfigPath, args);

beforeAll(async () => {
  ts = await startTestServer();
});

afterAll(async () => {
  await ts?.stop();
});

const POLICY = `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: demo-policy.example.com
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups:   [""]
      apiVersions: ["v1"]
      operations:  ["CREATE", "UPDATE"]
      resources:   ["configmaps"]
  validations:
  - expression: "!has(object.data) || size(object.data) <= 2"
    message: "at most 2 keys"
---
apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-binding-test.example.com
spec:
  policyName: demo-policy.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector:
      matchLabels:
        environment: test
`;

describe('kubectl', () => {
  it('applies a policy and binding, lists them, and is refused by them', async () => {
    const file = join(ts.dataDir, 'policy.yaml');
    await writeFile(file, POLICY);
    const a = await k('apply', '-f', file);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toContain('validatingadmissionpolicy.admissionregistration.orch.io/demo-policy.example.com created');
    const list = await k('get', 'validatingadmissionpolicies');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('demo-policy.example.com');
    const b = await k('get', 'validatingadmissionpolicybindings');
    expect(b.stdout).toContain('demo-policy.example.com');
    expect((await k('create', 'namespace', 'test-ns')).code).toBe(0);
    expect((await k('label', 'namespace', 'test-ns', 'environment=test')).code).toBe(0);
    const refused = await k('create', 'configmap', 'big', '-n', 'test-ns', '--from-literal=a=1', '--from-literal=b=2', '--from-literal=c=3');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied request: at most 2 keys");
    // elsewhere the binding does not apply
    expect((await k('create', 'configmap', 'big', '-n', 'default', '--from-literal=a=1', '--from-literal=b=2', '--from-literal=c=3')).code).toBe(0);
  });

  it('shows Warn results as warnings', async () => {
    const file = join(ts.dataDir, 'warn.yaml');
    await writeFile(file, `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: demo-warn
spec:
  policyName: demo-policy.example.com
  validationActions: [Warn]
`);
    expect((await k('apply', '-f', file)).code).toBe(0);
    const r = await k('create', 'configmap', 'warned', '-n', 'default', '--from-literal=a=1', '--from-literal=b=2', '--from-literal=c=3');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("Warning: Validation failed for ValidatingAdmissionPolicy 'demo-policy.example.com' with binding 'demo-warn': at most 2 keys");
  });

  it('a webhook configuration with a broken matchCondition is refused, naming the field', async () => {
    const file = join(ts.dataDir, 'hook.yaml');
    await writeFile(file, `apiVersion: admissionregistration.orch.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: broken
webhooks:
- name: broken.example.com
  clientConfig:
    url: https://127.0.0.1:1/validate
  rules:
  - {operations: ["CREATE"], apiGroups: [""], apiVersions: ["v1"], resources: ["pods"]}
  sideEffects: None
  admissionReviewVersions: ["v1"]
  matchConditions:
  - name: bad
    expression: "object.metadata.name =="
`);
    const r = await k('apply', '-f', file);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('webhooks[0].matchConditions[0].expression');
    expect((await k('get', 'validatingwebhookconfigurations', 'broken')).code).not.toBe(0);
  });
});
