/**
 * The worked examples of docs/firmware-bridge.md §10, generated from the codec so the document
 * cannot drift from the code (a test checks that every hex line here appears in the document).
 * Print them with:
 *   npx esbuild firmware-bridge/examples.ts --bundle --platform=node --format=esm --outfile=/tmp/fb.mjs
 *   node -e "import('/tmp/fb.mjs').then((m) => console.log(m.workedExamples()))"
 */
import { encodeCanMessage, type CanAddress } from './can-mapping.js';
import { buildRawFrame, encodeMessage } from './frame.js';
import { CommandId, MessageType, capabilityBits, encodePayload, type Message } from './messages.js';

/** Bytes as upper-case hex pairs separated by spaces. */
export function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0').toUpperCase()).join(' ');
}

export interface WorkedExample {
  title: string;
  message: Message;
  /** Header + payload + CRC before COBS. */
  raw: string;
  /** What goes on the serial line (COBS + 0x00). */
  serial: string;
  /** The same message on CAN (standard ids), one line per frame: `ID#DATA`. */
  can: string[];
}

const SHA256_OF_ABC = Uint8Array.from(
  'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'.match(/../g)!.map((h) => parseInt(h, 16)),
);

export function workedExampleMessages(): { title: string; message: Message; address: CanAddress }[] {
  const node = 5;
  const to: CanAddress = { node, direction: 'to_device' };
  const from: CanAddress = { node, direction: 'from_device' };
  return [
    { title: 'HELLO (gateway -> device), versions 1..1, nonce 0x12345678', address: to, message: { type: 'hello', seq: 0, version_min: 1, version_max: 1, nonce: 0x12345678 } },
    {
      title: 'IDENTITY (device -> gateway)',
      address: from,
      message: {
        type: 'identity', seq: 0, protocol_version: 1, nonce: 0x12345678, max_payload: 504,
        capabilities: capabilityBits(['telemetry', 'commands', 'heartbeat', 'fw_update', 'fw_sha256', 'fw_crc32', 'fw_rollback']),
        device_id: 'arm-01', device_type: 'servo', firmware_version: '1.2.0', hardware_revision: 'B',
        serial_number: 'SN42', features: ['imu'],
      },
    },
    {
      title: 'TELEMETRY: temp_c = 21.5 degC (f32), moving = true (bool), at 1000 ms',
      address: from,
      message: {
        type: 'telemetry', seq: 1, timestamp_ms: 1000,
        readings: [{ name: 'temp_c', type: 'f32', value: 21.5, unit: 'C' }, { name: 'moving', type: 'bool', value: true }],
      },
    },
    { title: 'COMMAND set_telemetry_period(500 ms)', address: to, message: { type: 'command', seq: 1, command_id: CommandId.set_telemetry_period, args: [{ type: 'u32', value: 500 }] } },
    { title: 'COMMAND_ACK for seq 1, ok', address: from, message: { type: 'command_ack', seq: 2, ref_seq: 1, status: 'ok', detail: '' } },
    { title: 'HEARTBEAT: uptime 60 s, degraded, fault bit 0 (overtemperature)', address: from, message: { type: 'heartbeat', seq: 3, uptime_ms: 60000, status: 'degraded', faults: 1 } },
    { title: 'ERROR: bad CRC on a frame whose header cannot be trusted', address: from, message: { type: 'error', seq: 4, code: 'bad_crc', ref_type: 0, ref_seq: 0, detail: '' } },
    {
      title: 'FW_BEGIN: transfer 0x0102, 3-byte image "abc", chunk 256, SHA-256, version 1.3.0',
      address: to,
      message: { type: 'fw_begin', seq: 2, transfer_id: 0x0102, image_size: 3, chunk_size: 256, digest_alg: 'sha256', digest: SHA256_OF_ABC, version: '1.3.0' },
    },
    { title: 'FW_CHUNK: offset 0, data "abc"', address: to, message: { type: 'fw_chunk', seq: 3, transfer_id: 0x0102, offset: 0, data: Uint8Array.of(0x61, 0x62, 0x63) } },
    { title: 'FW_CHUNK_ACK: ok, window 4, next_offset 3', address: from, message: { type: 'fw_chunk_ack', seq: 5, transfer_id: 0x0102, status: 'ok', window: 4, next_offset: 3 } },
    { title: 'FW_END', address: to, message: { type: 'fw_end', seq: 4, transfer_id: 0x0102 } },
    { title: 'FW_RESULT: activated, now running 1.3.0', address: from, message: { type: 'fw_result', seq: 6, transfer_id: 0x0102, result: 'activated', active_version: '1.3.0', detail: '' } },
    { title: 'FW_RESULT: verification failed, still running 1.2.0', address: from, message: { type: 'fw_result', seq: 6, transfer_id: 0x0102, result: 'rolled_back', active_version: '1.2.0', detail: 'sha256 mismatch' } },
    { title: 'FW_ABORT', address: to, message: { type: 'fw_abort', seq: 5, transfer_id: 0x0102, detail: 'operator' } },
  ];
}

export function workedExamples(): WorkedExample[] {
  return workedExampleMessages().map(({ title, message, address }) => ({
    title,
    message,
    raw: toHex(buildRawFrame(MessageType[message.type], message.seq, encodePayload(message))),
    serial: toHex(encodeMessage(message)),
    can: encodeCanMessage(message, address).map((f) => `${f.id.toString(16).toUpperCase().padStart(3, '0')}#${toHex(f.data).replace(/ /g, '')}`),
  }));
}
