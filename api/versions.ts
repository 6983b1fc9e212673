/** Wire-level versions and names every transport and client agrees on (docs/api.md § Versions). */
export const SERVICE_NAME = 'svc-control-center';
export const API_VERSION = 'v1';
export const SUPPORTED_API_VERSIONS = ['v1'] as const;
export const VERSION_POLICY =
  'Breaking changes ship under a new /v2/ path prefix. Send X-Svc-Api-Version: v1 or omit the header.';
/** Semver of `proto/svc/v1/control_center.proto`; the authoritative gRPC protocol version. */
export const PROTO_SEMVER = '1.0.19';
export const PROTO_PACKAGE = 'svc.v1';
export const PROTO_FILE = 'proto/svc/v1/control_center.proto';
