import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { workedExamples } from '../../firmware-bridge/examples.js';
import {
  CAPABILITY_BITS,
  CanReassembler,
  FAULT_BITS,
  MAX_PAYLOAD,
  MIN_DEVICE_PAYLOAD,
  MessageDirection,
  MessageType,
  decodeFrame,
  encodeCanMessage,
  type CanFrame,
} from '../../firmware-bridge/index.js';
import { hex } from './helpers.js';

const doc = readFileSync(new URL('../../docs/firmware-bridge.md', import.meta.url), 'utf8');

describe('docs/firmware-bridge.md', () => {
  const examples = workedExamples();

  it('has every worked example, byte for byte as the code produces it', () => {
    expect(examples.length).toBeGreaterThanOrEqual(13);
    for (const ex of examples) {
      expect(doc, ex.title).toContain(`#### ${ex.title}`);
      expect(doc, ex.title).toContain(`raw     ${ex.raw}\n`);
      expect(doc, ex.title).toContain(`serial  ${ex.serial}\n`);
      for (const frame of ex.can) expect(doc, ex.title).toContain(frame);
    }
  });

  it('the worked examples decode back to their messages on serial and on CAN', () => {
    for (const ex of examples) {
      const serial = decodeFrame(hex(ex.serial));
      expect(serial.ok && serial.message, ex.title).toEqual(ex.message);
      const r = new CanReassembler();
      const frames: CanFrame[] = ex.can.map((line) => {
        const [id, data] = line.split('#') as [string, string];
        return { id: parseInt(id, 16), extended: false, rtr: false, data: hex(data) };
      });
      expect(frames.map((f) => r.push(f)).at(-1)?.message, ex.title).toEqual(ex.message);
      const dir = MessageDirection[ex.message.type] === 'to_device' ? 'to_device' : 'from_device';
      expect(encodeCanMessage(ex.message, { node: 5, direction: dir }).length).toBe(frames.length);
    }
  });

  it('lists every type code, capability and fault bit as the code defines them', () => {
    for (const [name, code] of Object.entries(MessageType)) {
      const label = name.toUpperCase();
      expect(doc).toMatch(new RegExp(`\\| 0x${code.toString(16).toUpperCase().padStart(2, '0')} \\| ${label} \\|`));
    }
    CAPABILITY_BITS.forEach((name, bit) => expect(doc).toContain(`| ${bit} | \`${name}\` |`));
    FAULT_BITS.forEach((name, bit) => expect(doc).toContain(`| ${bit} | \`${name}\``));
  });

  it('states the CRC parameters, check values and size limits the code uses', () => {
    expect(doc).toContain('**0x29B1**');
    expect(doc).toContain('0xCBF43926');
    expect(doc).toContain(`\`length\` | payload length \`L\`, 0..${MAX_PAYLOAD}`);
    expect(doc).toContain(`at least ${MIN_DEVICE_PAYLOAD}`);
    expect(doc).toContain('**0xB142**');
  });
});
