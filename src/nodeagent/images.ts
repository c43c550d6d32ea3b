// Making a container's image present, as kubelet's image manager does: the
// pull policy (`imagePullPolicy`, else Always for `:latest`/untagged images and
// IfNotPresent otherwise), a per pod + image back-off after a failed pull
// (10 s doubling to 5 min, forgotten after twice that without failures), and
// the Events kubelet records on the container: Pulling, Pulled ("Successfully
// pulled …" or "… already present on machine"), Failed, BackOff,
// ErrImageNeverPull, InspectFailed.

import type { Clock } from './clock.js';
import type { ObjectRef } from './events/correlator.js';
import { msg } from './events/kubelet-events.js';
import { type EventSink, noEvents } from './events/recorder.js';
import { RuntimeCallError, type RuntimeClient } from './runtime/client.js';

const BACKOFF_START_MS = 10_000;
const BACKOFF_MAX_MS = 300_000;

/** why a container waits, as in its status; undefined when the image is there */
export type ImageResult = { reason: string; message: string } | undefined;

export function pullPolicy(image: string, policy?: string): string {
  if (policy === 'Always' || policy === 'IfNotPresent' || policy === 'Never') return policy;
  if (image.includes('@')) return 'IfNotPresent';
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon < 0 || last.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

export class ImagePuller {
  /** `<pod uid>_<image>` → flowcontrol.Backoff's entry */
  private readonly backoff = new Map<string, { ms: number; at: number }>();

  constructor(
    private readonly runtime: RuntimeClient,
    private readonly clock: Clock,
    private readonly events: EventSink = noEvents,
  ) {}

  async ensure(podUid: string, image: string, policyField: string | undefined, ref: ObjectRef): Promise<ImageResult> {
    const policy = pullPolicy(image, policyField);
    let present: boolean;
    try {
      present = (await this.runtime.imageStatus(image)) !== null;
    } catch (e) {
      const m = msg.inspectFailed(image, (e as Error).message);
      this.events.event(ref, 'Warning', 'InspectFailed', m);
      return { reason: 'ImageInspectError', message: m };
    }
    if (policy === 'Never' || (policy === 'IfNotPresent' && present)) {
      if (present) {
        this.events.event(ref, 'Normal', 'Pulled', msg.present(image));
        return undefined;
      }
      const m = msg.neverPull(image);
      this.events.event(ref, 'Warning', 'ErrImageNeverPull', m);
      return { reason: 'ErrImageNeverPull', message: m };
    }
    const key = `${podUid}_${image}`;
    const now = this.clock.now();
    const b = this.backoff.get(key);
    if (b && now - b.at < b.ms) {
      const m = msg.pullBackOff(image);
      this.events.event(ref, 'Normal', 'BackOff', m);
      return { reason: 'ImagePullBackOff', message: m };
    }
    this.events.event(ref, 'Normal', 'Pulling', msg.pulling(image));
    try {
      await this.runtime.pullImage(image);
    } catch (e) {
      const err = e instanceof RuntimeCallError ? e.goError : (e as Error).message;
      this.events.event(ref, 'Warning', 'Failed', msg.pullFailed(image, err));
      const t = this.clock.now();
      // flowcontrol.Backoff.Next: an entry idle for twice the maximum starts over
      const next = b && t - b.at <= 2 * BACKOFF_MAX_MS ? Math.min(BACKOFF_MAX_MS, b.ms * 2) : BACKOFF_START_MS;
      this.backoff.set(key, { ms: next, at: t });
      return { reason: 'ErrImagePull', message: err };
    }
    const took = this.clock.now() - now;
    const size = Number((await this.runtime.imageStatus(image).catch(() => null))?.size ?? 0);
    this.events.event(ref, 'Normal', 'Pulled', msg.pulled(image, took, took, size));
    this.backoff.delete(key);
    return undefined;
  }

  /** the pod is gone: its back-offs go too */
  forget(podUid: string): void {
    for (const k of this.backoff.keys()) if (k.startsWith(`${podUid}_`)) this.backoff.delete(k);
  }
}
