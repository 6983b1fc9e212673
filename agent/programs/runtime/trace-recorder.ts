/**
 * Frame recording during a run. Every frame the interpreter records carries the robot's state
 * (pose, velocity, e-stop, active mode) so playback can restore it; provider calls record none.
 */
import type { TraceFrame, TraceState } from './trace-file.js';

export class TraceRecorder {
  private frames: TraceFrame[] = [];

  constructor(private readonly stateOf: () => TraceState) {}

  /** Robot setup starts a fresh trace (docs/program-language.md §26: a multi-robot trace keeps the last robot's frames). */
  reset(): void {
    this.frames = [];
  }

  record(simTimeMs: number, event: string, payload: Record<string, unknown>, withState = true): TraceFrame {
    const frame: TraceFrame = { sim_time_ms: simTimeMs, event, payload, state: withState ? this.stateOf() : null };
    this.frames.push(frame);
    return frame;
  }

  get recorded(): readonly TraceFrame[] {
    return this.frames;
  }
}
