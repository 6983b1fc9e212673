/**
 * The agent's panel step (docs/architecture.md, request pipeline step 7; docs/panel.md § How the
 * agent serves it). The serving itself is transport-neutral and shared with the relay:
 * agent/core/panel-files.ts.
 */
export { isPanelPath, panelResponse, PANEL_ASSET_PREFIX, PANEL_PAGE_PATHS, PANEL_SW_PATH } from '../../core/panel-files.js';
