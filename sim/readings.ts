/**
 * Plausible readings for an emulated device: a bounded random walk per metric, so the telemetry a
 * demo shows moves like a sensor rather than jumping like noise. Seeded, so a test can predict it.
 */
export interface MetricModel {
  name: string;
  unit: string;
  min: number;
  max: number;
  step: number;
}

const MODELS: Record<string, MetricModel[]> = {
  imu: [
    { name: 'accel_z', unit: 'm/s2', min: 9.6, max: 10.0, step: 0.02 },
    { name: 'gyro_z', unit: 'deg/s', min: -5, max: 5, step: 0.5 },
    { name: 'temperature', unit: 'C', min: 25, max: 45, step: 0.2 },
  ],
  gps: [
    { name: 'satellites', unit: 'count', min: 4, max: 14, step: 1 },
    { name: 'hdop', unit: 'm', min: 0.6, max: 3.0, step: 0.1 },
  ],
  motor_controller: [
    { name: 'current', unit: 'A', min: 0, max: 12, step: 0.4 },
    { name: 'rpm', unit: 'rpm', min: 0, max: 3000, step: 60 },
    { name: 'temperature', unit: 'C', min: 30, max: 70, step: 0.3 },
  ],
  environment: [
    { name: 'temperature', unit: 'C', min: 15, max: 30, step: 0.1 },
    { name: 'humidity', unit: '%', min: 30, max: 70, step: 0.5 },
    { name: 'co2', unit: 'ppm', min: 400, max: 1200, step: 10 },
  ],
};
const GENERIC: MetricModel[] = [{ name: 'value', unit: '', min: 0, max: 100, step: 1 }];

export function metricsFor(deviceType: string): MetricModel[] {
  return MODELS[deviceType] ?? GENERIC;
}

/** Mulberry32: small, fast, good enough for simulated sensor noise. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class ReadingGenerator {
  private readonly values = new Map<string, number>();
  private readonly random: () => number;

  constructor(readonly models: MetricModel[], seed = 1) {
    this.random = seededRandom(seed);
    for (const m of models) this.values.set(m.name, m.min + (m.max - m.min) / 2);
  }

  next(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const m of this.models) {
      const v = this.values.get(m.name)! + (this.random() * 2 - 1) * m.step;
      const clamped = Math.min(m.max, Math.max(m.min, v));
      this.values.set(m.name, clamped);
      out[m.name] = Math.round(clamped * 1000) / 1000;
    }
    return out;
  }
}
