/**
 * Device emulators behind `svc sim-device`: the device side of the firmware-bridge protocol
 * (docs/firmware-bridge.md) carried over the HAL's transports, and MQTT devices following
 * docs/mqtt-devices.md. This folder sits above both libraries: it imports `hal/index.js` and
 * `firmware-bridge/`, and neither of them imports it (test/architecture/hal-boundaries.test.ts).
 */
export { runEmulator, type EmulatorSpec, type EmulatorExtras } from './run-emulator.js';
export { metricsFor, seededRandom, ReadingGenerator, type MetricModel } from './readings.js';
