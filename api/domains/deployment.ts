import * as z from 'zod';
import { defineSpec } from '../spec.js';

const profileQuery = z.lazy(() =>
  z.object({
    name: z.string().max(200).optional(),
    profile: z.string().max(200).optional(),
  }),
);
const verifyBody = z.lazy(() =>
  z.object({
    strict: z.boolean().optional(),
    entity_id: z.string().min(1).max(200).optional(),
  }),
);
const verifyQuery = z.lazy(() =>
  z.object({
    strict: z.enum(['true', 'false', '1', '0']).optional(),
    entity_id: z.string().min(1).max(200).optional(),
  }),
);
const rotateBody = z.lazy(() =>
  z.object({
    /** Rotate again this many days after this rotation (`rotation_due_at_ms`); omitted keeps the current period. */
    rotate_every_days: z.number().int().min(1).max(3650).optional(),
  }),
);

export type ProfileQuery = z.infer<typeof profileQuery>;
export type VerifyBody = z.infer<typeof verifyBody>;
export type VerifyQuery = z.infer<typeof verifyQuery>;
export type RotateBody = z.infer<typeof rotateBody>;

/**
 * Deployment gate, deployment profiles and deployment verification (docs/operations.md
 * § Deployment gate, profiles and verification), and the metadata of the program's secrets
 * (docs/operations.md § Secrets).
 */
export const getDeployGate = defineSpec({
  id: 'getDeployGate',
  group: 'deployment',
  summary: 'Deploy gate: configuration, device readiness, pool health, fleet agents and the program gates (readiness, safety, capability, health, package trust, governance)',
  method: 'GET',
  path: '/v1/deploy/gate',
  access: { kind: 'read' },
  cli: ['deploy', 'gate'],
});

export const listDeploymentProfiles = defineSpec<Record<string, never>, ProfileQuery>({
  id: 'listDeploymentProfiles',
  group: 'deployment',
  summary: 'The built-in deployment profile catalogue; with ?name= (or ?profile=) one profile in full (an unknown name answers a custom profile)',
  method: 'GET',
  path: '/v1/deployment-profiles',
  access: { kind: 'read' },
  rpc: { name: 'ListDeploymentProfiles', request: 'Empty' },
  moreRpcs: [{ name: 'GetDeploymentProfile', request: 'QueryRequest' }],
  cli: ['deployment-profiles', 'list'],
  query: profileQuery,
});

export const getDeploymentProfile = defineSpec({
  id: 'getDeploymentProfile',
  group: 'deployment',
  summary: 'One deployment profile by kind or alias; 404 for a name that is no built-in profile',
  method: 'GET',
  path: '/v1/deployment-profiles/{name}',
  access: { kind: 'read' },
  cli: ['deployment-profiles', 'get'],
});

export const verifyDeployment = defineSpec<VerifyBody, VerifyQuery>({
  id: 'verifyDeployment',
  group: 'deployment',
  summary: "Check the governed entities against the project's [governance] deployment_profile (read-only)",
  method: 'POST',
  path: '/v1/deployment/verify',
  access: { kind: 'action', action: 'Operate' },
  cli: ['deployment', 'verify'],
  body: verifyBody,
  query: verifyQuery,
});

export const listSecrets = defineSpec({
  id: 'listSecrets',
  group: 'deployment',
  summary: "Metadata of the program's declared secrets (never their values)",
  method: 'GET',
  path: '/v1/secrets',
  access: { kind: 'action', action: 'Deploy' },
  rpc: { name: 'ListSecrets', request: 'Empty' },
  cli: ['secrets', 'list'],
});

export const rotateSecret = defineSpec<RotateBody>({
  id: 'rotateSecret',
  group: 'deployment',
  summary: 'Record that a secret was rotated at its source (count, time, next due); emits SecretRotated',
  method: 'POST',
  path: '/v1/secrets/{name}/rotate',
  access: { kind: 'action', action: 'Deploy' },
  cli: ['secrets', 'rotate'],
  body: rotateBody,
});

export const deploymentSpecs = [getDeployGate, listDeploymentProfiles, getDeploymentProfile, verifyDeployment, listSecrets, rotateSecret];
