/** The firmware bridge: protocol v1 between the gateway and microcontroller firmware (docs/firmware-bridge.md). */
export * from './crc.js';
export * from './cobs.js';
export * from './messages.js';
export * from './frame.js';
export * from './timers.js';
export * from './session.js';
export * from './firmware-update.js';
export * from './can-mapping.js';
