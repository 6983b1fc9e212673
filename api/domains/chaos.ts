import * as z from 'zod';
import { defineSpec } from '../spec.js';

const simulateBody = z.lazy(() => z.object({ injections: z.array(z.unknown()).max(100).optional() }));
const experimentBody = z.lazy(() =>
  z.object({
    device_id: z.string().min(1, 'missing device_id').max(200),
    fault: z.enum(['link_loss', 'noise']),
    duration_secs: z.number().min(0.1).max(600),
    share: z.number().min(0).max(1).optional(),
    /** How long to wait for the device to be healthy again after the fault ends (default 30). */
    recovery_timeout_secs: z.number().min(1).max(600).optional(),
  }),
);

/**
 * Chaos experiments (docs/mesh.md § Chaos): the static experiment over the loaded program, and live
 * fault injection into an emulated or real device of the pool (Operate).
 */
export const listChaosInjections = defineSpec({
  id: 'listChaosInjections',
  group: 'chaos',
  summary: 'Injection kinds the static experiment knows',
  method: 'GET',
  path: '/v1/chaos/injections',
  access: { kind: 'read' },
  cli: ['chaos', 'injections'],
});

export const simulateChaos = defineSpec<z.infer<typeof simulateBody>>({
  id: 'simulateChaos',
  group: 'chaos',
  summary: 'Static chaos experiment: recovery, readiness, health and safety of the loaded program per injected failure',
  method: 'POST',
  path: '/v1/chaos/simulate',
  access: { kind: 'read' },
  cli: ['chaos', 'simulate'],
  body: simulateBody,
});

export const startChaosExperiment = defineSpec<z.infer<typeof experimentBody>>({
  id: 'startChaosExperiment',
  group: 'chaos',
  summary: 'Live experiment: inject link loss or noise into a device for N seconds, observe detection and recovery',
  method: 'POST',
  path: '/v1/chaos/experiments',
  access: { kind: 'action', action: 'Operate' },
  cli: ['chaos', 'experiment'],
  body: experimentBody,
});

export const listChaosExperiments = defineSpec({
  id: 'listChaosExperiments',
  group: 'chaos',
  summary: 'Live experiment reports, newest last (persisted)',
  method: 'GET',
  path: '/v1/chaos/experiments',
  access: { kind: 'read' },
  cli: ['chaos', 'experiments'],
});

export const chaosSpecs = [listChaosInjections, simulateChaos, startChaosExperiment, listChaosExperiments];
