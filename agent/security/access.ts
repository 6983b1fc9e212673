import type { Access } from '../core/operation.js';
import { ApiError, forbidden, unauthorized } from '../core/errors.js';
import type { EventBus } from '../events/event-bus.js';
import { platformEvent } from '../events/platform-events.js';
import type { Settings } from '../settings/settings.js';
import type { Principal } from './principal.js';
import { canGrant, roleAllows, type Role } from './rbac.js';
import { readNeedsPrincipal } from './read-policy.js';

export type AuthFailureReason = 'read_auth_required' | 'missing_or_invalid_token' | 'insufficient_role' | 'tenant_mismatch';

/** Records an `AuthFailed` platform event (never with the presented token). */
export function publishAuthFailed(bus: EventBus, reason: AuthFailureReason, principal: Principal | null, detail: Record<string, unknown> = {}): void {
  const who = principal ? principal.key_id : 'unknown';
  bus.publish(platformEvent('AuthFailed', 'svc-security', { reason, principal: who, ...detail }, `principal/${who}`));
}

/** The one access check every transport runs before an operation's handler (docs/wire-decisions.md D1, D2, D5, D6). */
export function enforceAccess(
  access: Access,
  principal: Principal | null,
  deps: { settings: Settings; bus: EventBus },
  /** Fields of the `AuthFailed` event of a refusal; a function is called only then (no allocation on the hot path). */
  detail: Record<string, unknown> | (() => Record<string, unknown>) = {},
): void {
  switch (access.kind) {
    case 'public':
      return;
    case 'read':
    case 'sensitive-read':
      if (!principal && readNeedsPrincipal(access, deps.settings)) deny(deps, 'read_auth_required', unauthorized(), principal, detail);
      return;
    case 'action':
      if (!principal) deny(deps, 'missing_or_invalid_token', unauthorized(), principal, detail);
      if (!roleAllows(principal.role, access.action)) deny(deps, 'insufficient_role', forbidden(), principal, detail);
      return;
    case 'admin':
      if (!principal) deny(deps, 'missing_or_invalid_token', unauthorized(), principal, detail);
      if (principal.role !== 'administrator') deny(deps, 'insufficient_role', forbidden(), principal, detail);
      return;
  }
}

function deny(
  deps: { bus: EventBus },
  reason: AuthFailureReason,
  error: ApiError,
  principal: Principal | null,
  detail: Record<string, unknown> | (() => Record<string, unknown>),
): never {
  publishAuthFailed(deps.bus, reason, principal, typeof detail === 'function' ? detail() : detail);
  throw error;
}

/**
 * Refuses (403 `forbidden`) a role write the caller could not grant: no principal can grant a role
 * above its own (`canGrant`; docs/security.md §5 "No escalation"). Every operation marked
 * `grantsRole` calls this with each role it is about to write, before writing anything.
 */
export function assertCanGrant(principal: Principal | null, roles: Iterable<Role>, deps?: { bus: EventBus }): void {
  for (const role of roles) {
    if (principal && canGrant(principal.role, role)) continue;
    if (deps) publishAuthFailed(deps.bus, 'insufficient_role', principal, { detail: `grant of role ${role}` });
    throw forbidden(`a ${principal?.role ?? 'anonymous'} caller cannot grant the ${role} role (its actions exceed the caller's)`);
  }
}
