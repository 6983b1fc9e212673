import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { HealthStatus, ReadinessStatus } from './kinds.js';
import type { HealthReport, ReadinessReport } from './status.js';

export const READINESS_SOURCE = 'svc-readiness';

interface ReadinessState {
  readiness_status: ReadinessStatus;
  mission_ready: boolean;
  score: number | null;
}

const FIRST_READINESS: ReadinessState = { readiness_status: 'unknown', mission_ready: false, score: null };

/**
 * Turns evaluations into platform events, only on transitions (docs/events.md, "Health and readiness transitions"). The last seen
 * state of each entity is kept for the life of the process; the first observation compares against
 * `unknown` (health) or `{unknown, not mission ready, no score}` (readiness).
 */
export class StatusTransitions {
  private readonly health = new Map<string, HealthStatus>();
  private readonly degraded = new Map<string, boolean>();
  private readonly readiness = new Map<string, ReadinessState>();

  constructor(private readonly bus: EventBus) {}

  observeHealth(r: HealthReport): void {
    const from = this.health.get(r.entity_id) ?? 'unknown';
    this.health.set(r.entity_id, r.health_status);
    if (from !== r.health_status) {
      this.publish('HealthChanged', r.entity_id, {
        entity_type: r.entity_type,
        from,
        to: r.health_status,
        reason: r.diagnostics[0]?.message ?? 'entity_health_evaluation',
        diagnostic_count: r.diagnostics.length,
        sources: r.sources,
      });
    }
    if (r.metrics.health_checks_failed > 0) {
      this.publish('HealthCheckFailed', r.entity_id, { entity_type: r.entity_type, failed_checks: r.metrics.health_checks_failed, passed_checks: r.metrics.health_checks_passed });
    }
    const serious = r.diagnostics.filter((d) => d.severity === 'critical' || d.severity === 'error');
    const was = this.degraded.get(r.entity_id) ?? false;
    this.degraded.set(r.entity_id, serious.length > 0);
    if (serious.length > 0 && !was) {
      this.publish('DegradedModeEntered', r.entity_id, { entity_type: r.entity_type, trigger: 'entity_health_evaluation', diagnostics: serious });
    }
  }

  observeReadiness(r: ReadinessReport): void {
    const previous = this.readiness.get(r.entity_id);
    const from = previous ?? FIRST_READINESS;
    const to: ReadinessState = { readiness_status: r.readiness_status, mission_ready: r.mission_ready, score: r.score };
    this.readiness.set(r.entity_id, to);
    if (from.readiness_status !== to.readiness_status || from.mission_ready !== to.mission_ready || from.score !== to.score) {
      this.publish('ReadinessChanged', r.entity_id, { entity_type: r.entity_type, from, to, issue_count: r.issues.length, sources: r.sources });
    }
    // Entering "not mission ready"; a first observation that is not ready counts as entering it.
    if (!to.mission_ready && (previous === undefined || previous.mission_ready)) {
      this.publish('ReadinessGateFailed', r.entity_id, { entity_type: r.entity_type, score: r.score, issues: r.issues });
    }
  }

  private publish(type: 'HealthChanged' | 'HealthCheckFailed' | 'DegradedModeEntered' | 'ReadinessChanged' | 'ReadinessGateFailed', entityId: string, payload: Record<string, unknown>): void {
    this.bus.publish(platformEvent(type, READINESS_SOURCE, payload, entityId));
  }
}
