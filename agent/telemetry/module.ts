import { defineModule } from '../core/module.js';
import { isStreamed, streamEventName } from '../events/platform-events.js';
import { TelemetryStore } from './telemetry-store.js';

/** The telemetry store: device telemetry and the streamed platform events, for the stream and the history. */
export const telemetryModule = defineModule({
  name: 'telemetry',
  open({ use }) {
    const settings = use('settings');
    const telemetry = new TelemetryStore(settings.stateDir, {
      capacity: settings.rings.telemetry,
      historyMaxBytes: settings.telemetryHistoryMaxBytes,
      historyFiles: settings.telemetryHistoryFiles,
    });
    // The platform events the catalogue marks streamed reach the stream (and the telemetry history)
    // as `kind: platform` telemetry.
    use('bus').subscribe((e) => {
      if (!isStreamed(e.type)) return;
      telemetry.append({
        kind: 'platform',
        event_type: streamEventName(e.type),
        source: e.source,
        ...(e.entity_id !== undefined ? { entity_id: e.entity_id } : {}),
        payload: e.payload,
        timestamp_ms: Date.parse(e.timestamp),
      });
    });
    return { provides: { telemetry }, close: () => telemetry.close() };
  },
});
