import type { JSX } from 'preact';
import { isAdministrator, type Session } from '../api.js';
import { Overview } from './overview.js';
import { Devices } from './devices.js';
import { Alerts } from './alerts.js';
import { Entities } from './entities.js';
import { Programs } from './programs.js';
import { Recovery } from './recovery.js';
import { Rollouts } from './rollouts.js';
import { Configuration } from './configuration.js';
import { Audit } from './audit.js';
import { Admin } from './admin.js';
import { Fleet } from './fleet.js';

export interface ViewEntry {
  /** The hash that names the view (`#/devices`) and its `data-view` attribute. */
  id: string;
  label: string;
  render: (session: Session) => JSX.Element;
  /** Listed only when this is true for the signed-in principal (e.g. administrators only); default always. */
  visible?: (session: Session) => boolean;
  /** Where the view exists: on an agent (default) or on a relay's page (docs/panel.md § Served by a relay). */
  on?: 'agent' | 'relay';
}

/** The views of this build, in navigation order (docs/panel.md § Views). One line per view. */
export const VIEWS: readonly ViewEntry[] = [
  { id: 'overview', label: 'Overview', render: (s) => <Overview session={s} /> },
  { id: 'devices', label: 'Devices', render: (s) => <Devices session={s} /> },
  { id: 'entities', label: 'Entities', render: (s) => <Entities session={s} /> },
  { id: 'alerts', label: 'Alerts & incidents', render: (s) => <Alerts session={s} /> },
  { id: 'programs', label: 'Programs', render: (s) => <Programs session={s} /> },
  { id: 'recovery', label: 'Recovery', render: (s) => <Recovery session={s} /> },
  { id: 'rollouts', label: 'Rollouts', render: (s) => <Rollouts session={s} /> },
  { id: 'configuration', label: 'Configuration', render: (s) => <Configuration session={s} /> },
  { id: 'audit', label: 'Audit', render: (s) => <Audit session={s} /> },
  { id: 'admin', label: 'Admin', render: (s) => <Admin session={s} />, visible: isAdministrator },
  { id: 'fleet', label: 'Fleet', render: (s) => <Fleet session={s} />, on: 'relay' },
];

/** The views the signed-in principal may open here: an agent's or a relay's, filtered by `visible`. */
export function viewsFor(session: Session): readonly ViewEntry[] {
  const here = session.relayTenant !== undefined ? 'relay' : 'agent';
  return VIEWS.filter((v) => (v.on ?? 'agent') === here && (!v.visible || v.visible(session)));
}
