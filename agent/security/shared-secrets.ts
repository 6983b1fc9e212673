import type { SharedSecretAccess, SharedSecretName } from '../../api/spec.js';
import type { Settings } from '../settings/settings.js';
import { constantTimeEqual } from './constant-time.js';

/** The configured value of each shared secret an operation may accept (`api/spec.ts#SharedSecretAccess`). */
function configured(name: SharedSecretName, settings: Settings): string | null {
  switch (name) {
    case 'pagerduty-webhook':
      return settings.alerting.pagerdutyWebhookSecret;
  }
}

/**
 * Whether the caller presented the operation's shared secret: only a configured, non-blank secret
 * counts, and the comparison takes the same time whatever prefix matches (docs/operations.md § Alerting).
 */
export function sharedSecretPresented(rule: SharedSecretAccess, presented: string | undefined, settings: Settings): boolean {
  const secret = configured(rule.secret, settings);
  if (!secret || presented === undefined) return false;
  return constantTimeEqual(presented, secret);
}
