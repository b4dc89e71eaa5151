// Every source of time is injected: the app's clock stamps records and arms timers.

/** Time for the runtime. Machines never read it; records carry what it said. */
export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; returns a cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
}

/** The real clock: Date.now and setTimeout. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(handle);
  },
};

/** A clock that moves only when told: for tests and deterministic simulation. */
export interface SimulatedClock extends Clock {
  /** Moves time forward, firing due timers in due order. */
  advance(ms: number): void;
  /** Timers armed and not yet fired or cancelled. */
  pendingTimers(): number;
}

export function simulatedClock(start = 0): SimulatedClock {
  let now = start;
  let nextId = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  return {
    now: () => now,
    setTimer(fn, ms) {
      const id = nextId++;
      timers.set(id, { due: now + Math.max(0, ms), fn });
      return () => timers.delete(id);
    },
    advance(ms) {
      const until = now + ms;
      while (true) {
        const due = [...timers.entries()]
          .filter(([, t]) => t.due <= until)
          .sort((a, b) => a[1].due - b[1].due || a[0] - b[0])[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].due);
        due[1].fn();
      }
      now = until;
    },
    pendingTimers: () => timers.size,
  };
}
