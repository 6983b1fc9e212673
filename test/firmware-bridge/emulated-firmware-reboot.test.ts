import { describe, expect, it } from 'vitest';
import { EmulatedFirmware } from '../../firmware-bridge/device/emulated-firmware.js';
import { CommandId, faultNames, type Message } from '../../firmware-bridge/messages.js';
import { ManualScheduler } from '../../firmware-bridge/timers.js';

function device(options: { faults?: string[]; persistentFaults?: string[] } = {}) {
  const scheduler = new ManualScheduler();
  const sent: Message[] = [];
  const fw = new EmulatedFirmware({
    deviceId: 'mcu-1',
    deviceType: 'imu',
    firmwareVersion: '1.0.0',
    sample: () => [{ name: 'value', value: 1 }],
    telemetryPeriodMs: 100,
    heartbeatPeriodMs: 1000,
    bootTimeMs: 400,
    ...options,
    send: (m) => sent.push(m),
    scheduler,
  });
  fw.start();
  fw.handle({ type: 'hello', seq: 1, version_min: 1, version_max: 1, nonce: 77 });
  return { fw, scheduler, sent };
}

const heartbeats = (sent: Message[]) => sent.filter((m): m is Extract<Message, { type: 'heartbeat' }> => m.type === 'heartbeat');

describe('emulated firmware: reboot', () => {
  it('acknowledges, goes silent for the boot time, forgets latched faults, announces itself (nonce 0) and waits for HELLO', () => {
    const { fw, scheduler, sent } = device({ faults: ['overtemperature'] });
    scheduler.advance(1000);
    expect(faultNames(heartbeats(sent).at(-1)!.faults)).toEqual(['overtemperature']);

    sent.length = 0;
    fw.handle({ type: 'command', seq: 2, command_id: CommandId.reboot, args: [] });
    expect(sent).toEqual([expect.objectContaining({ type: 'command_ack', ref_seq: 2, status: 'ok', detail: 'rebooting' })]);
    expect(fw.isBooting).toBe(true);

    // Booting: nothing heard, nothing said.
    fw.handle({ type: 'command', seq: 3, command_id: CommandId.identify, args: [{ type: 'u32', value: 1 }] });
    scheduler.advance(399);
    expect(sent).toHaveLength(1);

    scheduler.advance(1);
    expect(fw.isBooting).toBe(false);
    expect(fw.reboots).toBe(1);
    expect(sent.at(-1)).toMatchObject({ type: 'identity', nonce: 0, device_id: 'mcu-1' });
    // Not greeted since the boot: quiet until a gateway says HELLO.
    scheduler.advance(2000);
    expect(sent.at(-1)).toMatchObject({ type: 'identity', nonce: 0 });

    fw.handle({ type: 'hello', seq: 4, version_min: 1, version_max: 1, nonce: 78 });
    expect(sent.at(-1)).toMatchObject({ type: 'identity', nonce: 78 });
    scheduler.advance(1000);
    const hb = heartbeats(sent).at(-1)!;
    expect(hb.faults).toBe(0);
    expect(hb.uptime_ms).toBeLessThanOrEqual(3000);
  });

  it('a hardware (persistent) fault survives clear_faults and reboots', () => {
    const { fw, scheduler, sent } = device({ faults: ['overcurrent'], persistentFaults: ['undervoltage'] });
    fw.handle({ type: 'command', seq: 2, command_id: CommandId.clear_faults, args: [] });
    expect(sent.at(-1)).toMatchObject({ type: 'command_ack', status: 'ok', detail: 'cannot clear undervoltage: hardware fault' });
    scheduler.advance(1000);
    expect(faultNames(heartbeats(sent).at(-1)!.faults)).toEqual(['undervoltage']);
    fw.handle({ type: 'command', seq: 3, command_id: CommandId.reboot, args: [] });
    scheduler.advance(400);
    fw.handle({ type: 'hello', seq: 4, version_min: 1, version_max: 1, nonce: 5 });
    scheduler.advance(1000);
    expect(faultNames(heartbeats(sent).at(-1)!.faults)).toEqual(['undervoltage']);
  });
});
