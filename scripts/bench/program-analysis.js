// Program analysis (README.md § Benchmarks): parse plus readiness of a generated 5 000-line program, through the
// same functions the /v1/programs/readiness route runs. Target <= 200 ms. Prints a table and
// writes bench-results/program-analysis.json. Needs the compiled agent (`npm run build`).
//
// The program is generated (not read from disk) so its size is exact: robots with sensors,
// actuators, safety rules, missions, behaviours with loops, tasks with budgets, plus hardware
// profiles and the policy-style declarations the analyses read. Reported: the first (cold) run,
// then the median and best of BENCH_PROGRAM_RUNS (15) warm runs.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { parseProgram } = await dist('agent/programs/language/index.js');
const { evaluateReadiness } = await dist('agent/programs/analysis/readiness.js');

const TARGET_LINES = Number(process.env.BENCH_PROGRAM_LINES ?? 5000);
const RUNS = Number(process.env.BENCH_PROGRAM_RUNS ?? 15);
const TARGET_MS = 200;

function robotBlock(i) {
  return `
/// Yard rover number ${i}.
robot Rover${i} {
    uses hardware Yard${i % 7};
    sensor lidar: Lidar on "/dev/ttyUSB${i % 4}";
    sensor imu: IMU on "/dev/ttyACM${i % 3}";
    sensor gps: GPS;
    sensor cam: Camera on "rtsp://10.0.${i % 250}.2/live";
    actuator wheels: DifferentialDrive;
    topic status_${i}: RoverStatus publish on "/rover${i}/status";
    exposes capabilities [obstacle_avoidance, gps_navigation, emergency_stop, telemetry_streaming];
    safety {
        max_speed = 1.${i % 10} m/s;
        max_angular = 0.8 rad/s;
        stop_if lidar.read().nearest_distance < 0.3 m;
        zone dock_${i} circle at (${i % 9}, ${i % 5}) radius 2 m;
    }
    mission Round${i} {
        duration: ${30 + (i % 60)} min;
        requires capabilities [obstacle_avoidance, gps_navigation];
        undock; sweep; return_to_dock;
    }
    mode normal { }
    mode degraded { wheels.stop(); }
    behavior sweep() {
        loop every 100ms {
            let scan = lidar.read();
            if scan.nearest_distance < 0.8 m {
                wheels.drive(linear: 0.2 m/s, angular: 0.5 rad/s);
            } else {
                wheels.drive(linear: 0.6 m/s, angular: 0.0 rad/s);
            }
            publish status_${i} with scan;
        }
    }
    task report every 500ms deadline 50ms {
        budget { cpu <= 5%; }
        let fix = gps.read();
        publish status_${i} with fix;
    }
}
deploy Rover${i} to Yard${i % 7};
health_check Vitals${i} for robot Rover${i} {
    check battery.level >= 25%;
    check lidar.scan_hz >= 8 Hz;
}
recovery_policy Recovery${i} {
    on gps.lost { switch_to lidar_localization; reduce_speed 0.4 m/s; enter degraded; }
}
mitigation Slowdown${i} { if lidar.degraded { reduce_speed 0.2 m/s; } }
`;
}

function hardwareBlock(j) {
  return `
hardware Yard${j} {
    cpu: CortexA${70 + j};
    memory: ${4 + j} GB;
    storage: 64 GB;
    sensors [Lidar, Camera, IMU, GPS];
    actuators [DifferentialDrive];
    connectivity [WiFi, LTE];
    battery { capacity: ${150 + 10 * j} Wh; }
    network { bandwidth: 100 Mbps; latency: 20 ms; }
    timing { min_period: 8 ms; }
}
`;
}

function generate(lines) {
  const parts = ['module bench.yard;', 'import positioning.gps;'];
  for (let j = 0; j < 7; j++) parts.push(hardwareBlock(j));
  parts.push('requires_capability obstacle_avoidance { any_of sensors [Lidar]; any_of actuators [DifferentialDrive]; }');
  parts.push('assurance_case YardCase { evidence hardware_review; evidence replay_runs; }');
  let text = parts.join('\n');
  for (let i = 0; text.split('\n').length < lines; i++) text += robotBlock(i);
  return text;
}

const source = generate(TARGET_LINES);
const lineCount = source.split('\n').length;

function once() {
  const t0 = process.hrtime.bigint();
  const program = parseProgram(source, 'bench.sd');
  const t1 = process.hrtime.bigint();
  const report = evaluateReadiness(program, { config: null });
  const t2 = process.hrtime.bigint();
  return { parseMs: Number(t1 - t0) / 1e6, readinessMs: Number(t2 - t1) / 1e6, totalMs: Number(t2 - t0) / 1e6, robots: program.robots.length, score: report.score.total };
}

const cold = once();
const warm = Array.from({ length: RUNS }, once).sort((a, b) => a.totalMs - b.totalMs);
const median = warm[Math.floor(warm.length / 2)];
const fmt = (n) => n.toFixed(1).padStart(8);

console.log(`\nProgram analysis: parse + readiness of a generated ${lineCount}-line program (${cold.robots} robots)`);
console.log('                 parse ms  readiness ms  total ms');
console.log(`cold (1st run)  ${fmt(cold.parseMs)}  ${fmt(cold.readinessMs)}      ${fmt(cold.totalMs)}`);
console.log(`warm median     ${fmt(median.parseMs)}  ${fmt(median.readinessMs)}      ${fmt(median.totalMs)}`);
console.log(`warm best       ${fmt(warm[0].parseMs)}  ${fmt(warm[0].readinessMs)}      ${fmt(warm[0].totalMs)}`);
const pass = cold.totalMs <= TARGET_MS;
console.log(`target: cold total <= ${TARGET_MS} ms -> ${pass ? 'PASS' : 'FAIL'} (${(cold.totalMs / TARGET_MS).toFixed(2)} of the budget)\n`);

mkdirSync(path.join(ROOT, 'bench-results'), { recursive: true });
writeFileSync(
  path.join(ROOT, 'bench-results', 'program-analysis.json'),
  JSON.stringify({ lines: lineCount, robots: cold.robots, target_ms: TARGET_MS, cold, warm_median: median, warm_best: warm[0], pass }, null, 2),
);
if (process.env.BENCH_STRICT === '1' && !pass) process.exit(1);
