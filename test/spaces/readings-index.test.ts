import { describe, expect, it } from 'vitest';
import { ReadingsIndex } from '../../agent/spaces/readings-index.js';

const at = (device_id: string, metric: string, value: unknown, timestamp_ms: number) => ({ kind: 'device' as const, device_id, metric, value, timestamp_ms });
const MIN = 60_000;

describe('readings index', () => {
  it('answers the value in force at a time, from value changes; ignores devices it does not watch and non-numbers', () => {
    const ix = new ReadingsIndex(new Set(['c1']));
    ix.add(at('c1', 'people_count', 2, 10 * MIN));
    ix.add(at('c1', 'people_count', 2, 11 * MIN));
    ix.add(at('c1', 'people_count', 5, 20 * MIN));
    ix.add(at('c1', 'people_count', 'n/a', 21 * MIN));
    ix.add(at('other', 'people_count', 9, 21 * MIN));
    expect(ix.latest('c1', ['people_count'], 9 * MIN)).toBeNull();
    expect(ix.latest('c1', ['people_count'], 15 * MIN)).toEqual({ value: 2, timestamp_ms: 10 * MIN, changed_at_ms: 10 * MIN, metric: 'people_count' });
    expect(ix.latest('c1', ['people_count'])).toEqual({ value: 5, timestamp_ms: 20 * MIN, changed_at_ms: 20 * MIN, metric: 'people_count' });
    expect(ix.latest('other', ['people_count'])).toBeNull();
    // Repeated reports of the same value move only the "last reported" time.
    ix.add(at('c1', 'people_count', 5, 30 * MIN));
    expect(ix.latest('c1', ['people_count'])).toMatchObject({ timestamp_ms: 30 * MIN, changed_at_ms: 20 * MIN });
    expect(ix.latest('c1', ['people_count'], 25 * MIN)).toEqual({ value: 5, timestamp_ms: 20 * MIN, changed_at_ms: 20 * MIN, metric: 'people_count' });
  });

  it('prefers metrics in the order asked, reads booleans and numeric strings', () => {
    const ix = new ReadingsIndex(new Set(['e']));
    ix.add(at('e', 'co2', '610', 1));
    ix.add(at('e', 'co2_ppm', 640, 2));
    ix.add(at('e', 'backup_power', true, 3));
    expect(ix.latest('e', ['co2_ppm', 'co2'])!.value).toBe(640);
    expect(ix.latest('e', ['co2'])!.value).toBe(610);
    expect(ix.latest('e', ['backup_power'])!.value).toBe(1);
  });

  it('keeps an hour of changes plus the value in force when that hour opened, and at most 512 changes', () => {
    const ix = new ReadingsIndex(new Set(['c']));
    for (let i = 0; i < 200; i += 1) ix.add(at('c', 'people_count', i, i * MIN));
    // 199 min is the newest; the window opens at 134 min; the value in force then (134) is kept.
    expect(ix.latest('c', ['people_count'], 134 * MIN)!.value).toBe(134);
    expect(ix.latest('c', ['people_count'], 120 * MIN)).toBeNull();
    for (let i = 0; i < 2000; i += 1) ix.add(at('c', 'people_count', i % 2, 200 * MIN + i));
    expect(ix.latest('c', ['people_count'], 200 * MIN + 1487)).toBeNull();
    expect(ix.latest('c', ['people_count'], 200 * MIN + 1488)!.value).toBe(0);
  });
});

describe('device ids named in alert text', () => {
  it('matches whole ids only', async () => {
    const { names } = await import('../../agent/spaces/spaces-service.js');
    expect(names('device gw-1 is offline', 'gw-1')).toBe(true);
    expect(names('device gw-10 is offline', 'gw-1')).toBe(false);
    expect(names('lock-lobby enclosure opened', 'lock-lobby')).toBe(true);
    expect(names('tamper at lock-lobby.', 'lock-lobby')).toBe(true);
    expect(names('lock-lobby.b opened', 'lock-lobby')).toBe(false);
    expect(names('sensor a+b (x)', 'a+b')).toBe(true);
  });
});
