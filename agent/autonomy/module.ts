import path from 'node:path';
import { defineModule } from '../core/module.js';
import { AutonomyService } from './autonomy-service.js';
import { autonomyHandlers } from './handlers.js';

/**
 * Resilient autonomy: listens to the telemetry store (reflexes, newest readings), the bus (tamper,
 * spoofing, recovery events), the incident service and program simulations (episodic memory).
 */
export const autonomyModule = defineModule({
  name: 'autonomy',
  async open({ use, boot }) {
    const settings = use('settings');
    const project = use('project');
    const telemetry = use('telemetry');
    const devices = use('devices');
    const deviceHub = use('deviceHub');
    const alerts = use('alerts');
    const incidents = use('incidents');
    const programs = use('programs');
    const ws = programs.workspace;
    const config = project.config;
    const autonomy = await AutonomyService.open({
      files: settings.autonomy,
      configTree: config?.tree ?? null,
      // Traces are indexed from the project (or the program's directory); without either there is nothing to scan.
      traceRoot: config ? config.projectRoot : ws.programPath ? path.dirname(ws.programPath) : null,
      entities: use('entities'),
      devices: () => devices.list(),
      linkStats: () => deviceHub.stats(),
      alerts: () => alerts.list(),
      incidents: () => incidents.list(),
      programFacts: () => programs.programFacts(),
      warn: (m) => boot.log(`warning: ${m}`),
    });
    autonomy.seed(telemetry.ring.all());
    const unsubscribe = [
      // The store calls its listeners inside append(): a failure here must never reach the HAL's ingest.
      telemetry.ring.onAppend((e) => {
        try {
          autonomy.onTelemetry(e);
        } catch (err) {
          boot.log(`warning: autonomy could not evaluate a telemetry event: ${(err as Error).message}`);
        }
      }),
      use('bus').subscribe((e) => autonomy.onEvent(e)),
      incidents.onCreated((i) => autonomy.onIncident(i)),
      programs.onTraceRecorded((p) => autonomy.onTrace(p)),
    ];
    void autonomy.startupIndex();
    return {
      provides: { autonomy },
      handlers: autonomyHandlers,
      close: async () => {
        for (const u of unsubscribe) u();
        await autonomy.close();
      },
    };
  },
});
