import { it } from 'vitest';
import { demoProject, startAnalyticsAgent } from './fixture.js';

it('probe', async () => {
  const p = demoProject();
  const a = await startAnalyticsAgent({ config: p.config, program: p.program });
  for (const r of ['readiness?forecast_days=7', 'readiness-forecast?all=1', 'what-if?all=1', 'mission-risk', 'trust-graph', 'trust-graph?format=mermaid', 'mission-twin', 'certification-pack?strict=1', 'human-teaming', 'governance']) {
    const res = await a.json(`/v1/analytics/${r}`);
    console.log(r, res.status, JSON.stringify(res.body).slice(0, 1500));
  }
  await a.close();
}, 60000);
