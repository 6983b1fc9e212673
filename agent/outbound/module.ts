import { defineModule } from '../core/module.js';
import { OutboundHttp } from './outbound-http.js';

/** The HTTP client every outbound call of the agent uses (alert channels, OTLP, deploy and fleet agents, report delivery). */
export const outboundModule = defineModule({
  name: 'outbound',
  open({ use }) {
    const outbound = new OutboundHttp({ extraCaFile: use('settings').outboundCaFile });
    return { provides: { outbound }, handlers: [], close: () => outbound.close() };
  },
});
