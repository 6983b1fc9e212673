import net from 'node:net';
import { writeProject } from '../helpers/project-fixture.js';

export const ADMIN = 'a7'.repeat(32);

/** A TCP listener standing in for a live gateway; `close()` stops it. */
export async function liveGateway(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let accepted = 0;
  const server = net.createServer((s) => {
    accepted += 1;
    s.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { port, connections: () => accepted, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A loopback port nothing listens on (bound, then released). */
export async function deadPort(): Promise<number> {
  const g = await liveGateway();
  await g.close();
  return g.port;
}

/**
 * Two facilities: `tower-demo` (commercial, live gateway, zones `lobby` with sensors and `floor-12`
 * with none, a battery and a charger) and `annex` (a gateway whose endpoint refuses connections).
 * The lobby's MQTT sensors are `[[devices]]` placed in the zone by `zone = "lobby"`.
 */
export function spacesProject(ports: { live: number; dead: number }, extraFacilities = ''): string {
  return writeProject({
    'svc.toml': `
[project]
name = "Spaces"
version = "1.0.0"
[config]
devices = "svc.devices.toml"
facilities = "svc.facilities.toml"
`,
    'svc.devices.toml': `
[[devices]]
id = "counter-lobby"
type = "people_counter"
protocol = "mqtt"
zone = "lobby"
trust_level = "trusted"
[[devices]]
id = "env-lobby-a"
type = "environment"
protocol = "mqtt"
zone = "lobby"
trust_level = "trusted"
[[devices]]
id = "env-lobby-b"
type = "environment"
protocol = "mqtt"
zone = "lobby"
trust_level = "trusted"
[[devices]]
id = "leak-lobby"
type = "LeakSensor"
protocol = "mqtt"
zone = "lobby"
trust_level = "trusted"
[[devices]]
id = "battery-1"
type = "battery"
protocol = "mqtt"
trust_level = "trusted"
[[devices]]
id = "charger-1"
type = "charger"
protocol = "mqtt"
trust_level = "trusted"
`,
    'svc.facilities.toml': `
[readiness.profiles.smart_space]
min_score = 80
[readiness.profiles.smart_space.weights]
gateway_availability = 0.2
network_connectivity = 0.1
device_health = 0.15
battery_levels = 0.1
calibration = 0.05
security_status = 0.15
critical_sensors = 0.15
emergency_systems = 0.1
[readiness.profiles.smart_space.commercial]
required_devices = ["smoke-lobby", "sprinkler-9"]

[security]
profile = "commercial"
access = "badge"
[security.trust]
min_package_trust = 3

[[continuity_pairs]]
primary = "gw-main"
backup = "gw-backup"
on_failure = "failover"
missions = ["night-patrol"]

[[twins]]
id = "lobby-twin"
entity_id = "lobby"
entity_type = "zone"
mirror = ["occupancy"]

[[facilities]]
id = "tower-demo"
name = "Tower demo"
type = "commercial_tower"
compliance_profile = "commercial"

[[facilities.gateways]]
id = "gw-main"
type = "ThreadBorderRouter"
provider = "svc-thread"
endpoint = "127.0.0.1:${ports.live}"

[[facilities.zones]]
id = "lobby"
name = "Lobby"
type = "common"
[facilities.zones.baselines]
co2_ppm = 700

[[facilities.zones.devices]]
id = "smoke-lobby"
type = "SmokeDetector"
provider = "svc-matter"

[[facilities.zones.devices]]
id = "lock-lobby"
type = "SmartLock"
capabilities = ["access_control"]

[[facilities.zones]]
id = "floor-12"
name = "Floor 12"
parent = "lobby"

[[facilities.energy_systems]]
id = "battery-1"
type = "BatteryStorage"
mode = "grid_tied"

[[facilities.energy_systems]]
id = "charger-1"
type = "EVCharger"

[[facilities.energy_systems]]
id = "meter-1"
type = "UtilityMeter"

[[facilities.robots]]
id = "cleaner-1"
type = "CleaningRobot"

[[facilities]]
id = "annex"
name = "Annex"
facility_type = "residential"

[[facilities.gateways]]
id = "gw-annex"
type = "ZigbeeHub"
provider = "svc-zigbee"
endpoint = "127.0.0.1:${ports.dead}"
${extraFacilities}
`,
  });
}
