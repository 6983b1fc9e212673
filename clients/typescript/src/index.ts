export { SvcClient, LOCAL_URL, type SvcClientOptions, type FetchLike } from './client.js';
export {
  SvcError,
  ValidationError,
  ReadinessError,
  VerificationError,
  SecurityError,
  ConnectionError,
  PermissionError,
  errorClassFor,
  errorFromResponse,
} from './errors.js';
export {
  streamUrl,
  type StreamOptions,
  type StreamHandle,
  type StreamOffsets,
  type WebSocketConstructor,
  type WebSocketLike,
  type HelloFrame,
  type HeartbeatFrame,
  type BackpressureFrame,
  type ResumedFrame,
  type TraceRecord,
  type TelemetryEvent,
} from './stream.js';
export * from './generated/operations.js';
