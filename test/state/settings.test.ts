import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '../../agent/settings/settings.js';

describe('settings from SVC_ environment variables', () => {
  it('defaults', () => {
    const s = loadSettings({}, '/srv/robot');
    expect(s.stateDir).toBe('/srv/robot/.svc-control-center');
    expect(s.apiKeysFile).toBe('/srv/robot/.svc-control-center/api-keys.json');
    // No pepper is ever derived from a path or a constant: unset means "use the generated one".
    expect(s.pepper).toBeNull();
    expect(s.session.secret).toBeNull();
    expect(s.auditSigningKey).toBeNull();
    expect(s.legacyPepper).toBe('.svc-control-center');
    expect(s.tenantId).toBe('default');
    expect(s.maxBodyBytes).toBe(1024 * 1024);
    expect(s.rateLimitPerMinute).toBe(0);
    expect(s.ws).toEqual({ maxPendingFrames: 64, heartbeatIntervalMs: 15000, streamSeconds: 0 });
    expect(s.requireAuthReads).toBe(false);
    expect(s.requireAuthAllReads).toBe(false);
  });

  it('reads every variable and resolves paths against the working directory', () => {
    const s = loadSettings(
      {
        SVC_CONTROL_CENTER_STATE_DIR: 'var/state',
        SVC_API_KEYS_FILE: 'keys.json',
        SVC_TENANT_ID: 'acme',
        SVC_API_REQUIRE_AUTH_READS: 'TRUE',
        SVC_API_REQUIRE_AUTH_ALL_READS: '1',
        SVC_API_RATE_LIMIT_PER_MINUTE: '120',
        SVC_API_MAX_BODY_BYTES: '2048',
        SVC_WS_MAX_PENDING_FRAMES: '8',
        SVC_WS_HEARTBEAT_INTERVAL_MS: '500',
        SVC_WS_STREAM_SECONDS: '30',
      },
      '/srv/robot',
    );
    expect(s.stateDir).toBe(path.resolve('/srv/robot/var/state'));
    expect(s.apiKeysFile).toBe('/srv/robot/keys.json');
    // The specification's fallback survives only as the legacy pepper of the keys-file migration.
    expect(s.pepper).toBeNull();
    expect(s.legacyPepper).toBe('var/state');
    expect(s).toMatchObject({ tenantId: 'acme', requireAuthReads: true, requireAuthAllReads: true, rateLimitPerMinute: 120, maxBodyBytes: 2048 });
    expect(s.ws).toEqual({ maxPendingFrames: 8, heartbeatIntervalMs: 500, streamSeconds: 30 });
    expect(loadSettings({ SVC_API_KEY_PEPPER: 'pep', SVC_CONTROL_CENTER_STATE_DIR: 'x' }).pepper).toBe('pep');
    const explicit = loadSettings({ SVC_API_KEY_PEPPER: 'pep', SVC_SESSION_JWT_SECRET: 'sess', SVC_AUDIT_SIGNING_KEY: 'aud' });
    expect([explicit.pepper, explicit.session.secret, explicit.auditSigningKey]).toEqual(['pep', 'sess', 'aud']);
  });

  it('refuses values it cannot parse, naming the variable', () => {
    expect(() => loadSettings({ SVC_API_MAX_BODY_BYTES: '1MB' })).toThrow(SettingsError);
    expect(() => loadSettings({ SVC_API_MAX_BODY_BYTES: '1MB' })).toThrow(/SVC_API_MAX_BODY_BYTES/);
    expect(() => loadSettings({ SVC_WS_MAX_PENDING_FRAMES: '0' })).toThrow(/between 1/);
    expect(() => loadSettings({ SVC_API_RATE_LIMIT_PER_MINUTE: '-5' })).toThrow(/whole number/);
    // Flags are on only for 1/true.
    expect(loadSettings({ SVC_API_REQUIRE_AUTH_READS: 'yes' }).requireAuthReads).toBe(false);
  });
});
