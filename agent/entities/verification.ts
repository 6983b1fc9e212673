import type { EntityGraph } from './graph.js';
import type { Entity } from './model.js';
import { isDevice, type StatusEvaluator } from './status.js';

export interface VerifyOptions {
  /** Capabilities the entity (itself or through its members) must provide. */
  required_capabilities?: string[] | undefined;
  /** Make an untrusted or unknown trust status fail verification (advisory otherwise). */
  require_trust?: boolean | undefined;
}

export interface VerificationCheck {
  check: string;
  passed: boolean;
  /** A failed blocking check fails the verification; a failed advisory one is reported only. */
  blocking: boolean;
  detail: string;
}

/**
 * Unified verification of one entity: its place in the graph (parent, relationships), its health,
 * readiness and trust, its lifecycle, the identity of a device, and the capabilities asked for.
 */
export function verifyEntity(graph: EntityGraph, status: StatusEvaluator, e: Entity, options: VerifyOptions) {
  const s = status.status(e.id);
  const health = status.healthReport(e.id);
  const readiness = status.readinessReport(e.id);
  const trust = status.trustReport(e.id);
  const checks: VerificationCheck[] = [];
  const add = (check: string, passed: boolean, blocking: boolean, detail: string) => checks.push({ check, passed, blocking, detail });

  const live = e.sources.filter((x) => x !== 'overlay');
  add('source', true, false, live.length ? `known from ${live.join(', ')}` : 'known only from the operator overlay');
  if (e.parent_id !== undefined) add('parent', graph.get(e.parent_id) !== undefined, true, graph.get(e.parent_id) ? `parent ${e.parent_id} exists` : `parent ${e.parent_id} is not in the registry`);
  const dangling = graph.dangling.filter((r) => r.from_id === e.id || r.to_id === e.id);
  add('relationships', dangling.length === 0, true, dangling.length === 0 ? `${graph.relationshipsOf(e.id).length} relationships resolve` : `unresolved: ${dangling.map((r) => graph.unresolved(r).diagnostic).join('; ')}`);
  add('health', !['critical', 'offline', 'degraded'].includes(s.health_status), true, health.diagnostics[0]?.message ?? `health is ${s.health_status}`);
  add('readiness', readiness.mission_ready || readiness.readiness_status === 'unknown', true, readiness.issues[0] ?? `readiness is ${readiness.readiness_status}`);
  const trusted = s.trust_status === 'verified' || s.trust_status === 'trusted';
  const trustFails = s.trust_status === 'untrusted' || s.trust_status === 'compromised';
  add('trust', options.require_trust ? trusted : !trustFails, options.require_trust === true || trustFails, trust.issues[0] ?? `trust is ${s.trust_status}`);
  add('lifecycle', !['retired', 'archived', 'suspended'].includes(s.lifecycle_state), true, `lifecycle is ${s.lifecycle_state}`);
  if (isDevice(e)) {
    const networked = Boolean(e.metadata['ip_address'] || e.metadata['endpoint_url']);
    const identity = Boolean(e.security?.identity);
    add('identity', identity || !networked, networked, identity ? `identity ${e.security!.identity}` : networked ? 'networked device without a security identity' : 'no security identity declared');
  }
  const required = options.required_capabilities ?? [];
  if (required.length > 0) {
    const have = new Set([...e.capabilities, ...status.members(e.id).flatMap((m) => m.capabilities), ...status.devicesUnder(e.id).flatMap((d) => d.capabilities)]);
    const missing = required.filter((c) => !have.has(c));
    add('capabilities', missing.length === 0, true, missing.length === 0 ? `provides ${required.join(', ')}` : `missing capabilities: ${missing.join(', ')}`);
  }
  const failed = checks.filter((c) => !c.passed);
  return {
    entity_id: e.id,
    kind: e.kind,
    verified: !failed.some((c) => c.blocking),
    checks,
    issues: failed.map((c) => `${c.check}: ${c.detail}`),
    health_status: s.health_status,
    readiness_status: s.readiness_status,
    trust_status: s.trust_status,
    lifecycle_state: s.lifecycle_state,
  };
}
