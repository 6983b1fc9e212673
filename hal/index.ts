/**
 * The HAL's public surface (hal/README.md). The agent imports the HAL only through this module
 * (test/architecture/hal-boundaries.test.ts enforces it); files inside `hal/` import each other by
 * path. Native addons (`serialport`, `socketcan`) are loaded lazily by the links that need them, so
 * importing this module does not load them.
 */
export * from './core/backoff.js';
export * from './core/bounded-queue.js';
export * from './core/link.js';
export * from './core/reconnecting-link.js';

export * from './serial/serial-link.js';
export * from './serial/discover-serial.js';

export * from './can/can-frame.js';
export * from './can/slcan.js';
export * from './can/slcan-link.js';
export * from './can/socketcan-link.js';

export * from './mqtt/mqtt-link.js';
export * from './mqtt/mqtt-gateway.js';
export * from './mqtt/mqtt-device.js';
// The MQTT device convention (docs/mqtt-devices.md) under one name: its constants (PROTOCOL_VERSION,
// DEFAULT_PREFIX, …) are too generic to sit at the top level next to the other transports.
export * as mqttConvention from './mqtt/device-convention.js';
export type {
  DeviceIdentity,
  DeviceStatus,
  MetricSpec,
  MetricType,
  ReadingValue,
  Readings,
  TelemetryPayload,
  HeartbeatPayload,
  CommandArgs,
  CommandPayload,
  AckStatus,
  AckPayload,
} from './mqtt/device-convention.js';
