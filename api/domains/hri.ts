import * as z from 'zod';
import { defineSpec } from '../spec.js';

/**
 * Human–robot interaction sessions (docs/twins.md § HRI sessions): remote-expert sessions configured
 * in `[[spatial_sessions]]` or started over the API, persisted with their annotations; the replay is
 * the session's annotations plus the events recorded for its robot and devices while it was active.
 * Not on gRPC or JSON-RPC (the reference has no RPC for them).
 */
const startBody = z.lazy(() =>
  z.object({
    id: z.string().min(1).max(128).optional(),
    session_type: z.string().max(64).optional(),
    field_human_id: z.string().max(128).optional(),
    expert_human_id: z.string().max(128).optional(),
    robot_id: z.string().max(128).optional(),
    ar_device_id: z.string().max(128).optional(),
    camera_device_id: z.string().max(128).optional(),
    capabilities: z.array(z.string().max(128)).max(64).optional(),
  }),
);

const annotateBody = z.lazy(() =>
  z.object({
    layer: z.string().min(1).max(128),
    text: z.string().min(1).max(4096),
    author_human_id: z.string().max(128).optional(),
  }),
);

const replayQuery = z.lazy(() => z.object({ limit: z.string().regex(/^\d+$/).optional() }));

const read = { kind: 'read' } as const;
const approve = { kind: 'action', action: 'Approve' } as const;

export const listHriSessions = defineSpec({
  id: 'listHriSessions',
  group: 'hri',
  summary: 'HRI sessions: configured ones in configuration order (an active one replaces its configured record), then the other active ones by id',
  method: 'GET',
  path: '/v1/hri/sessions',
  access: read,
  cli: ['hri', 'sessions'],
});

export const startHriSession = defineSpec<z.infer<typeof startBody>>({
  id: 'startHriSession',
  group: 'hri',
  summary: 'Start (activate) an HRI session; a configured id may be started, an already active id is a 409',
  method: 'POST',
  path: '/v1/hri/sessions',
  access: approve,
  cli: ['hri', 'start'],
  body: startBody,
});

export const annotateHriSession = defineSpec<z.infer<typeof annotateBody>>({
  id: 'annotateHriSession',
  group: 'hri',
  summary: 'Add an annotation (layer, text) to an active HRI session',
  method: 'POST',
  path: '/v1/hri/sessions/{id}/annotate',
  access: approve,
  cli: ['hri', 'annotate'],
  body: annotateBody,
});

export const replayHriSession = defineSpec<Record<string, never>, z.infer<typeof replayQuery>>({
  id: 'replayHriSession',
  group: 'hri',
  summary: "An HRI session's replay: its annotations and the events recorded for its robot and devices since it started",
  method: 'GET',
  path: '/v1/hri/sessions/{id}/replay',
  access: read,
  cli: ['hri', 'replay'],
  query: replayQuery,
});

export const getHriCollaboration = defineSpec({
  id: 'getHriCollaboration',
  group: 'hri',
  summary: 'Collaboration graph: humans, robots, drones and sessions with their assignments and session roles',
  method: 'GET',
  path: '/v1/hri/collaboration',
  access: read,
  cli: ['hri', 'collaboration'],
});

export const getHriContext = defineSpec({
  id: 'getHriContext',
  group: 'hri',
  summary: 'Spatial context: hazard zones, human locations, configured and active session counts',
  method: 'GET',
  path: '/v1/hri/context',
  access: read,
  cli: ['hri', 'context'],
});

export const hriSpecs = [listHriSessions, startHriSession, annotateHriSession, replayHriSession, getHriCollaboration, getHriContext];
