// The volumes of the pods the agent runs, as kubelet's volume manager and
// plugins make them (spec 001 §5.5: tokens mounted at a predictable place;
// docs/nodeagent.md "Volumes"). Each volume is a directory
// `<root-dir>/pods/<uid>/volumes/<domain>~<plugin>/<name>` (kubelet's
// `kubernetes.io~configmap`, …, with the label domain: `orch.io~…` by
// default), handed to the runtime as CRI Mounts of the containers that mount
// it. configMap, secret, downwardAPI and projected volumes are written
// atomically (atomic-writer.ts) and re-read every minute; emptyDir is an empty
// directory; hostPath is the host's path itself. Other kinds are not mounted.
//
// A projected serviceAccountToken is requested through the TokenRequest API
// bound to the pod (`boundObjectRef` Pod, name and uid), with the API's own
// audience unless one is given, and requested again once 80 % of its life
// has passed or it is 24 h old (kubelet's token manager). A configMap or
// secret that is missing (and not optional) fails the mount: kubelet's
// FailedMount event, and the pod waits (its containers ContainerCreating),
// retried after 0.5 s doubling to 2 min 2 s. The pod's directory goes with it.

import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type FileProjection, writeAtomically } from './atomic-writer.js';
import type { Clock } from './clock.js';
import { type EnvContainer, EnvError, type EnvPod, type Fetched, fieldValue, resourceValue } from './container-env.js';
import { podRef } from './events/kubelet-events.js';
import type { EventSink } from './events/recorder.js';
import type { KubeObject } from './api-client.js';
import type { Mount } from './runtime/types.js';
import { resolveSubPath } from './subpath.js';

/** what the volume manager reads from the API (the node's own credentials) */
export interface VolumeReader {
  object(kind: 'configmaps' | 'secrets', ns: string, name: string): Promise<Fetched>;
  /** a TokenRequest for the account, bound to the pod; empty audiences = the API's */
  token(ns: string, serviceAccount: string, r: { audiences: string[]; expirationSeconds: number; pod: { name: string; uid: string } }): Promise<{ token: string; expiresAtMs: number }>;
}

interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}
interface DownwardFile {
  path: string;
  mode?: number;
  fieldRef?: { fieldPath: string };
  resourceFieldRef?: { containerName?: string; resource: string; divisor?: string | number };
}
interface Source {
  name?: string;
  items?: KeyToPath[];
  optional?: boolean;
}
interface Projection {
  configMap?: Source;
  secret?: Source;
  downwardAPI?: { items?: DownwardFile[] };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
}
export interface VolumeSpec {
  name: string;
  configMap?: Source & { defaultMode?: number };
  secret?: { secretName?: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number };
  downwardAPI?: { items?: DownwardFile[]; defaultMode?: number };
  projected?: { sources?: Projection[]; defaultMode?: number };
  emptyDir?: object;
  hostPath?: { path: string };
}
interface VolumeMountSpec {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
}
type EnvList = readonly { key: string; value: string }[];

export class VolumeError extends Error {}

const DEFAULT_MODE = 0o644;
/** kubelet's default syncFrequency */
const RESYNC_MS = 60_000;
const RETRY_START_MS = 500;
const RETRY_MAX_MS = 122_000;
/** kubelet's token manager: refresh after 80 % of the lifetime, or once the token is a day old */
const TOKEN_REFRESH_FRACTION = 0.8;
const TOKEN_MAX_AGE_MS = 24 * 3600_000;
const DEFAULT_TOKEN_SECONDS = 3600;

interface Token {
  token: string;
  issuedMs: number;
  expiresAtMs: number;
}
interface PodVolumes {
  /** volume name → host directory */
  paths: Map<string, string>;
  /** volume name → whether its content is the API's (mounted read-only, as kubelet does) */
  readOnly: Set<string>;
  nextSyncMs: number;
  /** the pod's labels and annotations when set up: a change sets the volumes up again (see mount) */
  podMeta: string;
}

export interface VolumeManagerOptions {
  rootDir: string;
  /** the label domain (`orch.io`, `kubernetes.io` with --api-domain k8s.io): the plugin directories' prefix */
  labelDomain: string;
  reader?: VolumeReader;
  /** the node's allocatable: a downward API file of a limit the container does not set shows it, as in env */
  allocatable?: () => Record<string, string>;
  clock: Clock;
  events: EventSink;
  log: (m: string) => void;
  /** how often a running pod's API-backed volumes are refreshed (kubelet's syncFrequency; default 1 min) */
  resyncMs?: number;
}

export class VolumeManager {
  private readonly pods = new Map<string, PodVolumes>();
  private readonly tokens = new Map<string, Token>();
  private readonly retry = new Map<string, { at: number; ms: number }>();

  constructor(private readonly o: VolumeManagerOptions) {}

  podDir(uid: string): string {
    return join(this.o.rootDir, 'pods', uid);
  }

  private dirOf(uid: string, plugin: string, name: string): string {
    return join(this.podDir(uid), 'volumes', `${this.o.labelDomain}~${plugin}`, name);
  }

  /**
   * sets up (or refreshes, when due) the pod's volumes; resolves with the
   * volume directories, or undefined while a first mount fails (the pod waits)
   */
  async mount(pod: KubeObject): Promise<PodVolumes | undefined> {
    const uid = pod.metadata.uid!;
    const now = this.o.clock.now();
    const have = this.pods.get(uid);
    // kubelet sets the volumes of an updated pod up again at its next sync (WaitForAttachAndMount →
    // ReprocessPod), so a downward API file follows a label or annotation change at once, not a minute later
    // (kube's e2e downwardapi_volume.go "should update labels on modification")
    const podMeta = JSON.stringify([pod.metadata.labels ?? {}, pod.metadata.annotations ?? {}]);
    if (have && now < have.nextSyncMs && have.podMeta === podMeta) return have;
    const r = this.retry.get(uid);
    if (!have && r && now < r.at) return undefined;
    const volumes = ((pod.spec as { volumes?: VolumeSpec[] }).volumes ?? []) as VolumeSpec[];
    const next: PodVolumes = { paths: new Map(), readOnly: new Set(), nextSyncMs: now + (this.o.resyncMs ?? RESYNC_MS), podMeta };
    let failed = false;
    for (const v of volumes) {
      try {
        const due = await this.setUp(pod, v, next);
        if (due !== undefined) next.nextSyncMs = Math.min(next.nextSyncMs, due);
      } catch (e) {
        if (!(e instanceof VolumeError || e instanceof EnvError)) throw e;
        failed = true;
        // kubelet's operation executor: MountVolume.SetUp failed for volume "x" : <why>
        this.o.events.event(podRef(pod), 'Warning', 'FailedMount', `MountVolume.SetUp failed for volume ${JSON.stringify(v.name)} : ${e.message}`);
      }
    }
    if (failed) {
      const ms = r ? Math.min(RETRY_MAX_MS, r.ms * 2) : RETRY_START_MS;
      this.retry.set(uid, { at: now + ms, ms });
      // a running pod keeps what it had (kubelet keeps the last good content); it is tried again at the retry pace
      if (have) {
        have.nextSyncMs = now + ms;
        return have;
      }
      return undefined;
    }
    this.retry.delete(uid);
    this.pods.set(uid, next);
    return next;
  }

  /**
   * the CRI Mounts of a container: each of its volumeMounts whose volume is
   * set up, at its subPath (subPathExpr expanded with the container's `env`;
   * SubPathError for a bad one)
   */
  mountsFor(uid: string, container: { volumeMounts?: VolumeMountSpec[] }, env: EnvList = []): Mount[] {
    return this.plan(uid, container, env).map((p) => p.mount);
  }

  /** mountsFor, with each missing sub-path made a directory first, as kubelet's makeMounts does */
  async containerMounts(uid: string, container: { volumeMounts?: VolumeMountSpec[] }, env: EnvList): Promise<Mount[]> {
    const plan = this.plan(uid, container, env);
    for (const p of plan) {
      if (p.sub && !(await stat(p.mount.hostPath).catch(() => undefined))) await mkdir(p.mount.hostPath, { recursive: true });
    }
    return plan.map((p) => p.mount);
  }

  private plan(uid: string, container: { volumeMounts?: VolumeMountSpec[] }, env: EnvList): { mount: Mount; sub: string }[] {
    const vols = this.pods.get(uid);
    const out: { mount: Mount; sub: string }[] = [];
    for (const vm of container.volumeMounts ?? []) {
      const dir = vols?.paths.get(vm.name);
      if (!dir) continue;
      const sub = resolveSubPath(vm, env);
      out.push({ sub, mount: { containerPath: vm.mountPath, hostPath: sub ? join(dir, sub) : dir, readonly: vm.readOnly === true || vols!.readOnly.has(vm.name) } });
    }
    return out;
  }

  /** the pod is gone: its directory and tokens go */
  async remove(uid: string): Promise<void> {
    this.pods.delete(uid);
    this.retry.delete(uid);
    for (const k of [...this.tokens.keys()]) if (k.startsWith(`${uid}/`)) this.tokens.delete(k);
    await rm(this.podDir(uid), { recursive: true, force: true });
  }

  /**
   * kubelet's cleanupOrphanedPodDirs: the directory of a pod that is neither
   * known nor running goes (a pod deleted while the agent was down)
   */
  async removeOrphans(known: (uid: string) => boolean): Promise<void> {
    let uids: string[];
    try {
      uids = await readdir(join(this.o.rootDir, 'pods'));
    } catch {
      return;
    }
    // asked per directory, after the read: a pod added meanwhile is known by then
    for (const uid of uids) if (!known(uid) && !this.pods.has(uid)) await this.remove(uid);
  }

  /** one volume; returns when it must be refreshed before the usual resync (a token), if so */
  private async setUp(pod: KubeObject, v: VolumeSpec, out: PodVolumes): Promise<number | undefined> {
    const uid = pod.metadata.uid!;
    const ns = pod.metadata.namespace ?? 'default';
    const now = this.o.clock.now();
    const write = async (plugin: string, payload: Map<string, FileProjection>) => {
      const dir = this.dirOf(uid, plugin, v.name);
      await writeAtomically(dir, payload, now);
      out.paths.set(v.name, dir);
      out.readOnly.add(v.name);
    };
    if (v.emptyDir) {
      const dir = this.dirOf(uid, 'empty-dir', v.name);
      await mkdir(dir, { recursive: true, mode: 0o777 });
      // kubelet's emptyDir setupDir: 0777 whatever the umask, so a container of any user writes there
      await chmod(dir, 0o777);
      out.paths.set(v.name, dir);
      return undefined;
    }
    if (v.hostPath) {
      out.paths.set(v.name, v.hostPath.path);
      return undefined;
    }
    if (v.configMap) {
      const payload = new Map<string, FileProjection>();
      await this.keys('configmap', ns, v.configMap, v.configMap.defaultMode ?? DEFAULT_MODE, payload);
      return void (await write('configmap', payload));
    }
    if (v.secret) {
      const payload = new Map<string, FileProjection>();
      await this.keys('secret', ns, { name: v.secret.secretName, items: v.secret.items, optional: v.secret.optional }, v.secret.defaultMode ?? DEFAULT_MODE, payload);
      return void (await write('secret', payload));
    }
    if (v.downwardAPI) {
      const payload = new Map<string, FileProjection>();
      this.downward(pod, v.downwardAPI.items ?? [], v.downwardAPI.defaultMode ?? DEFAULT_MODE, payload);
      return void (await write('downward-api', payload));
    }
    if (v.projected) {
      const mode = v.projected.defaultMode ?? DEFAULT_MODE;
      const payload = new Map<string, FileProjection>();
      let due: number | undefined;
      for (const s of v.projected.sources ?? []) {
        if (s.configMap) await this.keys('configmap', ns, s.configMap, mode, payload);
        if (s.secret) await this.keys('secret', ns, s.secret, mode, payload);
        if (s.downwardAPI) this.downward(pod, s.downwardAPI.items ?? [], mode, payload);
        if (s.serviceAccountToken) {
          const t = await this.token(pod, v.name, s.serviceAccountToken);
          payload.set(s.serviceAccountToken.path, { data: Buffer.from(t.token), mode });
          const refreshAt = refreshTime(t);
          due = due === undefined ? refreshAt : Math.min(due, refreshAt);
        }
      }
      await write('projected', payload);
      return due;
    }
    return undefined;
  }

  /** the keys of a ConfigMap or Secret (all, or `items`) as files */
  private async keys(kind: 'configmap' | 'secret', ns: string, src: Source, mode: number, payload: Map<string, FileProjection>): Promise<void> {
    const name = src.name ?? '';
    if (!this.o.reader) throw new VolumeError(`couldn't get ${kind === 'configmap' ? 'configMap' : 'secret'} ${ns}/${name}, no kubeClient defined`);
    const f = await this.o.reader.object(kind === 'configmap' ? 'configmaps' : 'secrets', ns, name);
    if ('error' in f) throw new VolumeError(f.error);
    if ('notFound' in f) {
      if (src.optional) return;
      throw new VolumeError(`${kind} ${JSON.stringify(name)} not found`);
    }
    const files = new Map<string, Buffer>();
    for (const [k, val] of Object.entries(f.data)) files.set(k, kind === 'secret' ? Buffer.from(val, 'base64') : Buffer.from(val));
    for (const [k, val] of Object.entries(f.binaryData ?? {})) files.set(k, Buffer.from(val, 'base64'));
    if (!src.items || src.items.length === 0) {
      for (const [k, data] of files) payload.set(k, { data, mode });
      return;
    }
    for (const it of src.items) {
      const data = files.get(it.key);
      if (!data) {
        if (src.optional) continue;
        throw new VolumeError(kind === 'configmap' ? `configmap references non-existent config key: ${it.key}` : `references non-existent secret key: ${it.key}`);
      }
      payload.set(it.path, { data, mode: it.mode ?? mode });
    }
  }

  /** downward API files: fields of the pod (labels and annotations as `k="v"` lines) or a container's resources */
  private downward(pod: KubeObject, items: DownwardFile[], mode: number, payload: Map<string, FileProjection>): void {
    const p = pod as unknown as EnvPod;
    for (const it of items) {
      let text = '';
      if (it.fieldRef) {
        const path = it.fieldRef.fieldPath;
        if (path === 'metadata.labels' || path === 'metadata.annotations') text = formatMap((path === 'metadata.labels' ? p.metadata.labels : p.metadata.annotations) ?? {});
        else text = fieldValue(path, p, [], []);
      } else if (it.resourceFieldRef) {
        const c = (p.spec?.containers ?? []).find((x) => x.name === it.resourceFieldRef!.containerName) as EnvContainer | undefined;
        if (!c) throw new VolumeError(`container ${it.resourceFieldRef.containerName ?? ''} not found`);
        text = resourceValue(it.resourceFieldRef, p, c, this.o.allocatable?.() ?? {});
      }
      payload.set(it.path, { data: Buffer.from(text), mode: it.mode ?? mode });
    }
  }

  private async token(pod: KubeObject, volume: string, s: NonNullable<Projection['serviceAccountToken']>): Promise<Token> {
    const key = `${pod.metadata.uid}/${volume}/${s.path}`;
    const now = this.o.clock.now();
    const have = this.tokens.get(key);
    if (have && now < refreshTime(have)) return have;
    if (!this.o.reader) throw new VolumeError('failed to fetch token: no kubeClient defined');
    const sa = (pod.spec as { serviceAccountName?: string }).serviceAccountName || 'default';
    try {
      const r = await this.o.reader.token(pod.metadata.namespace ?? 'default', sa, {
        audiences: s.audience ? [s.audience] : [],
        expirationSeconds: s.expirationSeconds ?? DEFAULT_TOKEN_SECONDS,
        pod: { name: pod.metadata.name, uid: pod.metadata.uid! },
      });
      const t = { token: r.token, issuedMs: now, expiresAtMs: r.expiresAtMs };
      this.tokens.set(key, t);
      return t;
    } catch (e) {
      // kubelet keeps serving a token that is still valid when a refresh fails
      if (have && now < have.expiresAtMs) {
        this.o.log(`token for pod ${pod.metadata.namespace}/${pod.metadata.name}: refresh failed: ${(e as Error).message}`);
        return have;
      }
      throw new VolumeError(`failed to fetch token: ${(e as Error).message}`);
    }
  }
}

/** when kubelet's token manager asks again: 80 % of the lifetime, at most a day after issue */
export function refreshTime(t: { issuedMs: number; expiresAtMs: number }): number {
  const ttl = t.expiresAtMs - t.issuedMs;
  return Math.min(t.issuedMs + TOKEN_REFRESH_FRACTION * ttl, t.issuedMs + TOKEN_MAX_AGE_MS);
}

/** kubelet's fieldpath.FormatMap: sorted `key="value"` lines, the value Go-quoted */
export function formatMap(m: Record<string, string>): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}\n`)
    .join('')
    .replace(/\n$/, '');
}
