/**
 * The relay trunk (docs/relay.md): how an agent that dialled out to a relay over MQTT is reached.
 * Both sides read this file; it holds names and shapes only. Envelopes are plain JSON in MQTT 3.1.1
 * payloads (no MQTT 5 properties), so any broker carries them (aedes, mosquitto, EMQX, HiveMQ…).
 */

/** Topic root of one agent: everything it may publish or subscribe to lives below it. */
export function agentTopicRoot(tenantId: string, agentId: string): string {
  return `svc/t/${tenantId}/a/${agentId}`;
}

export const relayTopics = {
  /** Relay → agent: request envelopes. The agent subscribes with QoS 1. */
  requests: (t: string, a: string) => `${agentTopicRoot(t, a)}/req`,
  /** Agent → relay: the answer to a request, on the reply topic the request named (below the agent's root). */
  replies: (t: string, a: string, relayNode: string) => `${agentTopicRoot(t, a)}/res/${relayNode}`,
  /** Agent → everyone: retained presence ({@link AgentPresence}); the agent's Last Will says offline on the same topic. */
  status: (t: string, a: string) => `${agentTopicRoot(t, a)}/status`,
  /** Agent → relay: platform events and telemetry frames ({@link AgentEventFrame}), the outbox drains here. */
  events: (t: string, a: string) => `${agentTopicRoot(t, a)}/events`,
  /** Agent → relay: frames of one relayed WebSocket stream. */
  stream: (t: string, a: string, streamId: string) => `${agentTopicRoot(t, a)}/stream/${streamId}`,
  /** What a relay node subscribes to, for every agent of every tenant. */
  allStatus: 'svc/t/+/a/+/status',
  allEvents: 'svc/t/+/a/+/events',
} as const;

/** Parses `svc/t/{tenant}/a/{agent}/...`; null for any other topic. */
export function parseAgentTopic(topic: string): { tenantId: string; agentId: string; rest: string[] } | null {
  const parts = topic.split('/');
  if (parts.length < 5 || parts[0] !== 'svc' || parts[1] !== 't' || parts[3] !== 'a' || !parts[2] || !parts[4]) return null;
  return { tenantId: parts[2], agentId: parts[4], rest: parts.slice(5) };
}

/** Ids usable in topics: no MQTT wildcards or separators. */
export const TOPIC_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * One relayed HTTP request. `obo` is the on-behalf-of token: an EdDSA JWT the relay signs for this
 * request ({@link OnBehalfOfClaims}); the agent verifies it with the relay key pinned at enrollment and
 * runs the request through its own pipeline (RBAC, read policy, rate limit, audit) as that principal.
 */
export interface RelayRequest {
  kind: 'request';
  id: string;
  method: string;
  /** `/v1/...` with the query string, as the caller sent it after `/agents/{agent_id}`. */
  path: string;
  headers: Record<string, string>;
  /** Body bytes, base64; absent for no body. */
  body_b64?: string;
  obo: string | null;
  reply_to: string;
  /** Epoch ms after which the relay has given up (the agent drops it unanswered). */
  deadline_ms: number;
}

export interface RelayResponse {
  kind: 'response';
  id: string;
  status: number;
  headers: Record<string, string>;
  body_b64?: string;
}

/** Retained on {@link relayTopics.status}; the Last Will publishes `{online:false, …}`. */
export interface AgentPresence {
  agent_id: string;
  tenant_id: string;
  online: boolean;
  agent_version: string;
  connected_since_ms: number | null;
  last_seen_ms: number;
}

/** An event or telemetry frame the agent forwards (live, or from its outbox after a reconnect). */
export interface AgentEventFrame {
  kind: 'event';
  agent_id: string;
  /** Monotonic per agent (outbox order); a gap tells the relay frames were dropped. */
  seq: number;
  /** Frames the outbox had to drop since the previous frame (overflow is counted, never silent). */
  dropped_before: number;
  frame: Record<string, unknown>;
}

/**
 * Envelopes larger than {@link MAX_ENVELOPE_BYTES} travel as chunks: the serialized envelope is cut
 * into parts, each published as `{chunk: {id, seq, total}, part}`; the receiver reassembles by id.
 */
export interface EnvelopeChunk {
  chunk: { id: string; seq: number; total: number };
  part: string;
}

export const MAX_ENVELOPE_BYTES = 256 * 1024;

/** Claims of the enrollment token the relay issues (EdDSA JWT): the agent's MQTT password. */
export interface EnrollmentClaims {
  iss: 'svc-relay';
  /** The agent id. */
  sub: string;
  tenant_id: string;
  /** The relay's public key (JWK, OKP Ed25519): the agent pins it to verify on-behalf-of tokens. */
  relay_key: Record<string, unknown>;
  jti: string;
  iat: number;
  exp: number;
}

/** Claims of an on-behalf-of token: who called the relay, for which agent, briefly. */
export interface OnBehalfOfClaims {
  iss: 'svc-relay';
  /** The relay caller's key id (the agent's audit names it). */
  sub: string;
  /** The agent id the request is for: another agent refuses it. */
  aud: string;
  tenant_id: string;
  role: string;
  user_id: string | null;
  jti: string;
  iat: number;
  exp: number;
}

/** Lifetime of an on-behalf-of token: long enough for one request, short enough not to be replayed later. */
export const OBO_TTL_SECS = 60;

/**
 * Relayed WebSocket streams (`WS /agents/{agent_id}/v1/stream/telemetry` on the relay). The relay
 * publishes these on the agent's {@link relayTopics.requests} topic; the agent opens a WebSocket to its
 * own LAN listener with `obo` as Bearer token (its stream applies auth, replay, resume and
 * backpressure as for a LAN client) and answers on `reply_to` = {@link relayTopics.stream}.
 */
export interface RelayStreamOpen {
  kind: 'stream_open';
  id: string;
  /** `/v1/stream/telemetry` with the caller's query string (its `access_token` removed). */
  path: string;
  obo: string | null;
  reply_to: string;
  /** Epoch ms after which the relay has given up waiting for the first frame. */
  deadline_ms: number;
}

/** Relay → agent: a text frame the client sent. */
export interface RelayStreamData {
  kind: 'stream_data';
  id: string;
  data: string;
}

/** Relay → agent: the client went away; close the agent-side socket. */
export interface RelayStreamClose {
  kind: 'stream_close';
  id: string;
}

/** Agent → relay: a text frame of the agent's stream. */
export interface RelayStreamFrame {
  kind: 'stream_frame';
  id: string;
  data: string;
}

/** Agent → relay: the agent-side socket closed (or could not open: `code` 1011/4xxx, `reason`). */
export interface RelayStreamClosed {
  kind: 'stream_closed';
  id: string;
  code: number;
  reason: string;
}

/** Relayed streams one agent serves at once; more are refused with stream_closed 1013. */
export const MAX_RELAYED_STREAMS = 32;
