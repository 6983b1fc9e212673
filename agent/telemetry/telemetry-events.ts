/** Telemetry events (docs/streaming.md, "Frames from the server"), discriminated by `kind`. */
export type TelemetryEvent =
  | {
      kind: 'device';
      device_id: string;
      metric: string;
      value: unknown;
      timestamp_ms: number;
      robot_id?: string;
      unit?: string;
      session_id?: string;
      /** The device's own sample time (its clock, e.g. ms since boot). */
      device_ts_ms?: number;
    }
  | { kind: 'sensor'; sensor_id: string; sensor_type: string; value: unknown; timestamp_ms: number }
  | { kind: 'heartbeat'; task_name: string; timestamp_ms: number }
  | { kind: 'device_heartbeat'; device_id: string; protocol?: string; timestamp_ms: number; [k: string]: unknown }
  | { kind: 'health'; target: string; status: string; timestamp_ms: number; reason?: string; from?: string }
  | { kind: 'session'; session_id: string; phase: string; source?: string; mission_trace_path?: string; timestamp_ms: number }
  | { kind: 'runtime_metrics'; session_id: string; metrics: Record<string, unknown>; timestamp_ms: number }
  | {
      kind: 'platform';
      event_type: string;
      source: string;
      entity_id?: string;
      payload: Record<string, unknown>;
      timestamp_ms: number;
      session_id?: string;
      tenant_id?: string;
    };

export type TelemetryKind = TelemetryEvent['kind'];
