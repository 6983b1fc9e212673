/** Roles and actions of the RBAC matrix (docs/security.md §5). Pure data, no transport knowledge. */

import { ACTIONS, ROLES, type Action, type Role } from '../../api/roles.js';

export { ACTIONS, ROLES, type Action, type Role } from '../../api/roles.js';

const MATRIX: Record<Role, readonly Action[]> = {
  administrator: ACTIONS,
  supervisor: ['Deploy', 'Operate', 'Approve', 'Override', 'Shutdown', 'Recover', 'Provision'],
  developer: ['Deploy', 'Operate'],
  operator: ['Operate', 'Shutdown', 'Recover'],
  safety_officer: ['Operate', 'Approve', 'Shutdown'],
  auditor: [],
  guest: [],
};

export function roleAllows(role: Role, action: Action): boolean {
  return MATRIX[role].includes(action);
}

/**
 * No principal can grant a role above its own (docs/security.md §5, "No escalation"): `granter` may
 * give `role` only when every action `role` allows is one `granter` allows too. Administrator is the
 * only role with Delete, so only an administrator can make administrators; anyone may grant the
 * action-less auditor.
 */
export function canGrant(granter: Role, role: Role): boolean {
  return MATRIX[role].every((a) => MATRIX[granter].includes(a));
}

export function permissionsOf(role: Role): Action[] {
  return ACTIONS.filter((a) => MATRIX[role].includes(a));
}

const ALIASES: Record<string, Role> = {
  admin: 'administrator',
  dev: 'developer',
  safety: 'safety_officer',
  safetyofficer: 'safety_officer',
};

/** Lenient parser: case-insensitive, aliases accepted, anything unknown is `guest` (reference rule). */
export function parseRole(value: unknown): Role {
  if (typeof value !== 'string') return 'guest';
  const v = value.trim().toLowerCase();
  if ((ROLES as readonly string[]).includes(v)) return v as Role;
  return ALIASES[v] ?? 'guest';
}

/** `safety_officer` → `SafetyOfficer`, as the matrix and audit payloads spell roles. */
export function pascalRole(role: Role): string {
  return role
    .split('_')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

export function rbacMatrix(): Record<string, Action[]> {
  const out: Record<string, Action[]> = {};
  for (const role of ['administrator', 'developer', 'operator', 'supervisor', 'safety_officer', 'auditor', 'guest'] as const) {
    out[pascalRole(role)] = permissionsOf(role);
  }
  return out;
}
