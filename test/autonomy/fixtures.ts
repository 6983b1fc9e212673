import fs from 'node:fs';
import path from 'node:path';
import { writeProject } from '../helpers/project-fixture.js';

export const OPERATOR_KEY = 'op-key-autonomy-0123456789';
export const AUDITOR_KEY = 'aud-key-autonomy-0123456789';
export const ADMIN_KEY = 'f3'.repeat(32);

export const op = (body: unknown, key = OPERATOR_KEY) => ({ method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

export const PROGRAM = `module carpark.bumper;

robot Bumper {
    sensor lidar: Lidar on "/dev/ttyUSB0";
    actuator wheels: DifferentialDrive;
    exposes capabilities [obstacle_avoidance, emergency_stop];
    safety {
        max_speed = 0.8 m/s;
        stop_if lidar.read().nearest_distance < 0.25 m;
    }
    task cruise high every 100ms deadline 30ms {
        wheels.drive(linear: 0.5 m/s, angular: 0.0 rad/s);
    }
    kill_switch BumperStop { priority: critical; action { wheels.stop(); emergency_stop; } }
}

deploy Bumper to RoverV2;

decision_tree ShopperReflex reflex {
    version = "1.0.0";
    when lidar.nearest_distance < 0.97 m { stop_drive; flash_beacon; }
}
decision_tree TrolleyLineLocal local {
    version = "1.0.0";
    when lidar.nearest_distance < 1.27 m { slow_to 0.2 m/s; }
}
`;

/** A project with a spoofed and a tampered entity, a recovery playbook, autonomy tables, a program and a keys file. */
export function autonomyProject(autonomyToml = '', programExtra = ''): { manifest: string; root: string; keys: string; program: string } {
  const manifest = writeProject({
    'svc.toml': `
[project]
name = "Autonomy Test"
version = "1.0.0"
[config]
facilities = "svc.entities-extra.toml"
health = "svc.autonomy.toml"
`,
    'svc.entities-extra.toml': `
[[entities]]
id = "cam-spoof"
kind = "camera"
[entities.metadata]
"sensor.spoofing_detected" = "true"

[[entities]]
id = "arm-tampered"
kind = "actuator"
[entities.metadata]
"tamper.detected" = "true"

[[entities]]
id = "plugin-host"
kind = "service"
[entities.metadata]
"plugin.unsigned" = "true"

[[entities]]
id = "robot-1"
kind = "robot"
[entities.metadata]
battery_pct = "9"
mission_id = "patrol"

[[recovery.playbooks]]
name = "camera_swap"
entity_kinds = ["camera"]
`,
    'svc.autonomy.toml': autonomyToml,
    'programs/bumper.sd': PROGRAM + programExtra,
  });
  const root = path.dirname(manifest);
  const keys = path.join(root, 'keys.json');
  fs.writeFileSync(
    keys,
    JSON.stringify([
      { key_id: 'op', token: OPERATOR_KEY, role: 'operator' },
      { key_id: 'aud', token: AUDITOR_KEY, role: 'auditor' },
    ]),
  );
  return { manifest, root, keys, program: path.join(root, 'programs', 'bumper.sd') };
}
