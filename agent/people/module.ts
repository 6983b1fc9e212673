import { lazy } from '../core/lazy.js';
import { defineModule } from '../core/module.js';
import { peopleHandlers } from './handlers.js';

/**
 * People (docs/people.md): computed on request from the configuration, the device pool and the
 * telemetry ring; nothing to open at start, so the service is built on the first request.
 */
export const peopleModule = defineModule({
  name: 'people',
  open({ use }) {
    const deps = {
      project: use('project'),
      humanHealthEnabled: use('settings').people.humanHealthEnabled,
      telemetry: use('telemetry'),
      devices: use('devices'),
    };
    const people = lazy(async () => new (await import('./people-service.js')).PeopleService(deps));
    return { provides: { people }, handlers: peopleHandlers };
  },
});
