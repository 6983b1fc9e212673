/**
 * The role and action vocabulary of the RBAC matrix (docs/security.md §5). The contract names them
 * so specs, clients and the panel share one list; which role holds which action is decided by the
 * agent (`agent/security/rbac.ts`).
 */
export const ROLES = [
  'administrator',
  'supervisor',
  'developer',
  'operator',
  'safety_officer',
  'auditor',
  'guest',
] as const;
export type Role = (typeof ROLES)[number];

/** Canonical order; every listing of actions uses it. */
export const ACTIONS = ['Deploy', 'Operate', 'Approve', 'Override', 'Shutdown', 'Recover', 'Delete', 'Provision'] as const;
export type Action = (typeof ACTIONS)[number];
