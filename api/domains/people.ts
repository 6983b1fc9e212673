import { defineSpec } from '../spec.js';

/**
 * People (docs/people.md): the human registry and wearables of the configuration, the human-health
 * gate, and human (team) readiness. Reads only; `/v1/humans*` lies under a sensitive prefix, so those
 * routes need a principal when `SVC_API_REQUIRE_AUTH_READS` is on.
 */
export const listHumans = defineSpec({
  id: 'listHumans',
  group: 'people',
  summary: 'Humans of the configuration with certification and wearable counts',
  method: 'GET',
  path: '/v1/humans',
  access: { kind: 'sensitive-read' },
  cli: ['humans', 'list'],
});

export const getHumansReadiness = defineSpec({
  id: 'getHumansReadiness',
  group: 'people',
  summary: 'Operators and, with a loaded program, the team readiness report',
  method: 'GET',
  path: '/v1/humans/readiness',
  access: { kind: 'sensitive-read' },
  cli: ['humans', 'readiness'],
});

export const listHumanTwins = defineSpec({
  id: 'listHumanTwins',
  group: 'people',
  summary: 'Twins of humans; health mirrors are dropped while the human-health gate is closed',
  method: 'GET',
  path: '/v1/humans/twins',
  access: { kind: 'sensitive-read' },
  cli: ['humans', 'twins'],
});

export const getHumanReadiness = defineSpec({
  id: 'getHumanReadiness',
  group: 'people',
  summary: "One human's readiness (availability, certifications, wearables) and the team figures",
  method: 'GET',
  path: '/v1/humans/{id}/readiness',
  access: { kind: 'sensitive-read' },
  cli: ['humans', 'readiness-of'],
});

export const listWearables = defineSpec({
  id: 'listWearables',
  group: 'people',
  summary: 'Wearables with their link state from telemetry; health readings only through the human-health gate',
  method: 'GET',
  path: '/v1/wearables',
  access: { kind: 'read' },
  cli: ['wearables', 'list'],
});

export const getHumanHealthPolicy = defineSpec({
  id: 'getHumanHealthPolicy',
  group: 'people',
  summary: 'The human-health gate: configuration switch, environment switch, consent and retention',
  method: 'GET',
  path: '/v1/human-health/policy',
  access: { kind: 'read' },
  cli: ['human-health', 'policy'],
});

export const peopleSpecs = [listHumans, getHumansReadiness, listHumanTwins, getHumanReadiness, listWearables, getHumanHealthPolicy];
