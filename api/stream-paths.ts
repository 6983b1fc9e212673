import type { ExtraPath } from './openapi.js';

export const TELEMETRY_STREAM_PATH = '/v1/stream/telemetry';

/** Streaming endpoints: served by the WebSocket transport, documented beside the contract's operations. */
export const STREAM_PATHS: readonly ExtraPath[] = [
  {
    method: 'get',
    path: TELEMETRY_STREAM_PATH,
    summary: 'WebSocket stream of traces, alerts, telemetry and platform events',
    description:
      'Upgrade to WebSocket. Frames: hello, resumed, pong, heartbeat, backpressure, trace, alert, telemetry. ' +
      'Send {"type":"resume","telemetry_offset":N,"trace_offset":N,"alert_offset":N} to resume; see docs/streaming.md.',
    tag: 'stream',
    security: true,
  },
];
