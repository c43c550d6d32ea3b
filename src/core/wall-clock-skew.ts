// A settable offset on this process's wall clock, for the chaos tests' clock
// jumps (issue #15 item 4; docs/reliability.md "Partition nemesis"). Only the
// wall clock moves (`Date.now()`, `new Date()`): timers and
// `performance.now()` keep running on the monotonic clock, as they do when
// NTP steps a real machine's clock. Installed only by `orch server
// --enable-fault-injection`; never in a normal server.

export interface WallClockSkew {
  /** current offset, ms (positive = ahead) */
  get(): number;
  set(offsetMs: number): void;
}

let installed: WallClockSkew | undefined;

export function installWallClockSkew(): WallClockSkew {
  if (installed) return installed;
  const RealDate = Date;
  let offset = 0;
  // a subclass, so `instanceof Date`, Date.parse, Date.UTC and the prototype stay the real ones
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...(args as [number]));
    }
    static override now(): number {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
  installed = {
    get: () => offset,
    set: (ms) => {
      offset = ms;
    },
  };
  return installed;
}
