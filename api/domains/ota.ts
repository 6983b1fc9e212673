import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * The wire shape of a rollout as `POST /v1/ota/execute`, `POST /v1/ota/plan` and `GET /v1/ota/status`
 * answer it (docs/operations.md § Rollouts): types only, shared by the agent's store and the panel.
 */
export interface RolloutStep {
  robot_name: string;
  hardware: string;
  status: 'pending' | 'in_progress' | 'updated' | 'deployed' | 'rolled_back' | 'skipped' | 'failed' | 'interrupted';
  version: string;
  phase_percent: number | null;
  batch?: number | null;
  device_id?: string;
  target?: string;
  detail?: string;
  duration_ms?: number;
  readiness?: { ready: boolean; detail: string } | null;
}

export interface RolloutResult {
  strategy: string;
  version: string;
  dry_run: boolean;
  steps: RolloutStep[];
  success: boolean;
  phases: number[];
  batches?: { index: number; phase_percent: number; targets: number; condition?: string }[];
  /** The gate each batch must pass (share deployed) and the bound on targets down at once. */
  success_threshold?: number;
  disruption_budget?: number | null;
  /** blue_green: traffic moved to the new version (at least one target deployed). */
  switched?: boolean;
}

/** The running (or last finished) rollout, as `GET /v1/ota/status` shows it under `rollout`. */
export interface ActiveRollout {
  id: string;
  status: 'running' | 'succeeded' | 'failed' | 'interrupted';
  kind: 'agents' | 'firmware';
  program: string;
  started_at_ms: number;
  finished_at_ms: number | null;
  halted: boolean;
  halt_reason: string | null;
  completed_steps: number;
  rollout: RolloutResult;
}

/**
 * OTA rollouts (docs/operations.md § Rollouts): plan and execute staged rollouts of a program version
 * (to deploy agents) or a firmware image (to this agent's microcontrollers), and the deploy-target side
 * every agent serves so another control center can roll out to it (`/v1/rollout`, `/v1/rollback`,
 * `/v1/status`, `/v1/readiness`).
 */
const assignment = z.object({
  robot_name: z.string().min(1).max(256),
  hardware: z.string().min(1).max(256),
});

/** A firmware image rolled out with the plan (additive): local devices, or remote agents' devices. */
const firmwareSchema = z.object({
  version: z.string().min(1).max(64),
  image_base64: z.string().min(1).max(8 * 1024 * 1024),
  device_type: z.string().min(1).max(128).optional(),
  device_ids: z.array(z.string().min(1).max(256)).max(1000).optional(),
});

/**
 * A project configuration file sent with a rollout (additive; docs/operations.md § Rollouts,
 * "Configuration in a bundle"): TOML text for the receiving agent's project root. The name is a plain
 * file name (`svc.toml` or `svc.<part>.toml`), never a directory or `..`, so a bundle can only replace
 * manifest and fragment files beside the agent's `--config`.
 */
export const CONFIG_FILE_NAME = /^svc(\.[A-Za-z0-9_-]+)?\.toml$/;
export const CONFIG_FILE_MAX_BYTES = 1024 * 1024;
export const CONFIG_FILES_MAX = 32;
const configFilePath = z.string().max(128).regex(CONFIG_FILE_NAME, "expected a plain file name 'svc.toml' or 'svc.<name>.toml' (no directories)");
const configFileContent = z.string().max(CONFIG_FILE_MAX_BYTES, 'a configuration file is at most 1 MiB');
const configFilesOf = <T extends z.ZodRawShape>(item: z.ZodObject<T>) =>
  z
    .array(item)
    .max(CONFIG_FILES_MAX, `at most ${CONFIG_FILES_MAX} configuration files`)
    .refine((files) => new Set(files.map((f) => (f as { path: string }).path)).size === files.length, 'a configuration file is named twice');
const configFileSchema = z.object({ path: configFilePath, content: configFileContent });

/**
 * `strategy` and `version` are required, but checked by the service so that a missing one reads as
 * the reference's decoder text, ``missing field `strategy` `` (docs/operations.md § Rollouts).
 */
export const otaBodySchema = z.lazy(() =>
  z.object({
    strategy: z.string().max(64).optional(),
    version: z.string().max(128).optional(),
    canary_percent: z.number().int().min(0).max(255).optional(),
    dry_run: z.boolean().optional(),
    assignments: z.array(assignment).max(10_000).optional(),
    rollback_on_readiness_fail: z.boolean().optional(),
    readiness_runtime: z.boolean().optional(),
    readiness_inject_faults: z.boolean().optional(),
    require_certify: z.boolean().optional(),
    /** Staged schedule in cumulative percent (default [10, 50, 100]). */
    phases: z.array(z.number().int().min(1).max(100)).min(1).max(20).optional(),
    /** Fraction of a batch that must end deployed for the rollout to go on (default 1.0). */
    success_threshold: z.number().min(0).max(1).optional(),
    /** Targets that may be down at once, and failures after which the rollout halts (default: no bound). */
    disruption_budget: z.number().int().min(1).max(100_000).optional(),
    /** Canary: go on with the remaining targets once the canary batch passes (default true). */
    canary_promote: z.boolean().optional(),
    firmware: firmwareSchema.optional(),
    /** Configuration files for the deploy agents' project roots, signed inside the bundle. */
    config_files: configFilesOf(configFileSchema).optional(),
  }),
);
export type OtaBody = z.infer<typeof otaBodySchema>;

/** What a control center sends to a deploy target (`POST /v1/rollout`). */
export const rolloutBodySchema = z.lazy(() =>
  z.object({
    target: z.string().min(1).max(512),
    version: z.string().min(1, 'missing version').max(128),
    program: z.string().max(2 * 1024 * 1024).nullable().optional(),
    program_hash: z.string().max(128).nullable().optional(),
    assignments: z.array(assignment).max(10_000).optional(),
    certifications: z.array(z.string().max(256)).max(1000).optional(),
    certification_proof: z.unknown().optional(),
    firmware: z
      .array(
        z.object({
          version: z.string().min(1).max(64),
          image_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 hex digest'),
          image_base64: z.string().min(1).max(8 * 1024 * 1024),
          device_type: z.string().min(1).max(128).optional(),
          device_ids: z.array(z.string().min(1).max(256)).max(1000).optional(),
        }),
      )
      .max(16)
      .optional(),
    /** `sha256` is the signed digest of `content` (the bundle signs `{path, sha256}`). */
    config_files: configFilesOf(
      configFileSchema.extend({ sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 hex digest') }),
    ).optional(),
    artifact_signature: z.string().max(4096).nullable().optional(),
    artifact_public_key: z.string().max(8192).nullable().optional(),
    packages: z.array(z.unknown()).max(1000).optional(),
  }),
);
export type RolloutBody = z.infer<typeof rolloutBodySchema>;

export const rollbackBodySchema = z.lazy(() => z.object({ target: z.string().max(512).optional() }));
export const readinessQuerySchema = z.lazy(() =>
  z.object({ runtime: z.string().max(10).optional(), inject_health_faults: z.string().max(10).optional() }),
);

const DEPLOY = { kind: 'action', action: 'Deploy' } as const;

export const getOtaStatus = defineSpec({
  id: 'getOtaStatus',
  group: 'ota',
  summary: 'Deployed versions per target, rollout history and the last (or running, or interrupted) rollout',
  method: 'GET',
  path: '/v1/ota/status',
  access: { kind: 'sensitive-read' },
  rpc: { name: 'GetOtaStatus', request: 'Empty' },
  cli: ['ota', 'status'],
});

export const planOta = defineSpec<OtaBody>({
  id: 'planOta',
  group: 'ota',
  summary: 'Plan a rollout (canary, staged, blue_green, all) with its certification proof; contacts no target',
  method: 'POST',
  path: '/v1/ota/plan',
  access: DEPLOY,
  rpc: { name: 'PlanOta', request: 'JsonBodyRequest' },
  cli: ['ota', 'plan'],
  body: otaBodySchema,
});

export const executeOta = defineSpec<OtaBody>({
  id: 'executeOta',
  group: 'ota',
  summary: 'Execute a rollout batch by batch: signed bundles to deploy agents, firmware to devices, readiness gates, rollback',
  method: 'POST',
  path: '/v1/ota/execute',
  access: DEPLOY,
  rpc: { name: 'ExecuteOta', request: 'JsonBodyRequest' },
  cli: ['ota', 'execute'],
  body: otaBodySchema,
});

export const receiveRollout = defineSpec<RolloutBody>({
  id: 'receiveRollout',
  group: 'ota',
  summary: 'Deploy target: install a signed rollout bundle (program source, firmware images, configuration files), keeping the previous version',
  method: 'POST',
  path: '/v1/rollout',
  access: DEPLOY,
  cli: ['ota', 'receive'],
  body: rolloutBodySchema,
});

export const rollbackRollout = defineSpec<z.infer<typeof rollbackBodySchema>>({
  id: 'rollbackRollout',
  group: 'ota',
  summary: 'Deploy target: return to the previous program, firmware images and configuration files',
  method: 'POST',
  path: '/v1/rollback',
  access: DEPLOY,
  cli: ['ota', 'rollback'],
  body: rollbackBodySchema,
});

export const getDeployTargetStatus = defineSpec({
  id: 'getDeployTargetStatus',
  group: 'ota',
  summary: 'Deploy target: current and previous version, program hash, health',
  method: 'GET',
  path: '/v1/status',
  access: { kind: 'read' },
  cli: ['ota', 'target-status'],
});

export const getDeployTargetReadiness = defineSpec<Record<string, never>, z.infer<typeof readinessQuerySchema>>({
  id: 'getDeployTargetReadiness',
  group: 'ota',
  summary: 'Deploy target: mission readiness from the device pool and the served program',
  method: 'GET',
  path: '/v1/readiness',
  access: { kind: 'read' },
  cli: ['ota', 'target-readiness'],
  query: readinessQuerySchema,
});

export const otaSpecs = [getOtaStatus, planOta, executeOta, receiveRollout, rollbackRollout, getDeployTargetStatus, getDeployTargetReadiness];
