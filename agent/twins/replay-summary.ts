import type { TraceFile } from '../programs/runtime/trace-file.js';

/** What a recorded run did: frames, duration, events by name, emergency stops and the final state. */
export function replaySummary(path: string, trace: TraceFile) {
  const events: Record<string, number> = {};
  for (const f of trace.frames) events[f.event] = (events[f.event] ?? 0) + 1;
  const withState = trace.frames.filter((f) => f.state !== null);
  const last = trace.frames[trace.frames.length - 1];
  return {
    trace: path,
    trace_version: trace.version,
    deterministic: trace.deterministic,
    frame_count: trace.frames.length,
    duration_ms: last ? last.sim_time_ms : 0,
    events: Object.fromEntries(Object.entries(events).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    emergency_stop_frames: withState.filter((f) => f.state!.emergency_stop).length,
    final_state: withState.length > 0 ? withState[withState.length - 1]!.state : null,
  };
}
