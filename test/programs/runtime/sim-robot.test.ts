import { describe, expect, it } from 'vitest';

import { SafetyMonitor, zoneContains } from '../../../agent/programs/runtime/safety-monitor.js';
import { SimRobot, fixed2 } from '../../../agent/programs/runtime/sim-robot.js';

describe('SimRobot', () => {
  it('starts at the origin, at rest', () => {
    const robot = new SimRobot();
    expect(robot.snapshot()).toEqual({
      pose: { x: 0, y: 0, theta: 0, z: 0 },
      velocity: { linear: 0, angular: 0 },
      emergency_stop: false,
    });
  });

  it('integrates position with the heading from before the tick', () => {
    const robot = new SimRobot();
    robot.drive(0.4, 0);
    robot.tick(0.1);
    expect(robot.pose.x).toBeCloseTo(0.04, 12);
    expect(robot.pose.y).toBe(0);

    const turner = new SimRobot();
    turner.drive(1, 0.5);
    turner.tick(1);
    // θ_old = 0: all of the first second goes along x.
    expect(turner.pose).toEqual({ x: 1, y: 0, theta: 0.5, z: 0 });
    turner.tick(1);
    expect(turner.pose.theta).toBe(1);
    expect(turner.pose.x).toBeCloseTo(1 + Math.cos(0.5), 12);
    expect(turner.pose.y).toBeCloseTo(Math.sin(0.5), 12);
  });

  it('measures the nearest obstacle surface, wall or range, floored at 0.01', () => {
    const robot = new SimRobot();
    // Obstacle 2 at (−1, 1.5) r 0.25 is nearer than obstacle 1 at (2, 0) r 0.3 (1.7).
    expect(robot.lidarNearest()).toBeCloseTo(1.5527756377319946, 12);
    robot.pose.x = 1;
    expect(robot.lidarNearest()).toBeCloseTo(0.7, 12);
    robot.pose.x = 4.5;
    expect(robot.lidarNearest()).toBeCloseTo(0.5, 12);
    // Inside obstacle 1: its surface no longer counts; the wall at x = 5 is 3.1 away.
    robot.pose.x = 1.9;
    expect(robot.lidarNearest()).toBeCloseTo(Math.min(5 - 1.9, Math.hypot(2.9, 1.5) - 0.25), 12);
    robot.pose.x = 4.999;
    expect(robot.lidarNearest()).toBe(0.01);
    robot.pose.x = -4.2;
    expect(robot.readSensor('Lidar')).toEqual({ nearest_distance: expect.closeTo(0.8, 12), range_max: 10 });
  });

  it('reads IMU, GPS, camera and unknown sensors', () => {
    const robot = new SimRobot();
    robot.pose.theta = 0.25;
    expect(robot.readSensor('IMU')).toEqual({ roll: 0, pitch: 0, yaw: 0.25 });
    expect(robot.readSensor('GPS')).toMatchObject({ fix_quality: 1, satellites: 8 });
    expect(robot.readSensor('Camera')).toEqual({ width: 640, height: 480, encoding: 'rgb8' });
    expect(robot.readSensor('AltitudeSensor')).toEqual({ altitude: 0 });
    expect(robot.readSensor('Thermometer')).toBeNull();
    robot.latchEmergencyStop();
    expect(robot.readSensor('GNSS')).toMatchObject({ fix_quality: 0, satellites: 0 });
  });

  it('follows waypoints at the follow speed and stops at the last one', () => {
    const robot = new SimRobot();
    robot.follow([{ x: 1, y: 0 }, { x: 1, y: 1 }], 0.5);
    robot.tick(1);
    expect(robot.pose).toMatchObject({ x: 0.5, y: 0 });
    expect(robot.velocity.linear).toBe(0.5);
    robot.tick(2);
    expect(robot.pose).toMatchObject({ x: 1, y: 0.5 });
    expect(robot.pose.theta).toBeCloseTo(Math.PI / 2, 12);
    robot.tick(5);
    expect(robot.pose).toMatchObject({ x: 1, y: 1 });
    expect(robot.velocity).toEqual({ linear: 0, angular: 0 });
    expect(robot.followQueue).toEqual([]);
  });

  it('holds still under a latched emergency stop', () => {
    const robot = new SimRobot();
    robot.drive(1, 0);
    robot.latchEmergencyStop();
    robot.tick(1);
    expect(robot.snapshot()).toEqual({ pose: { x: 0, y: 0, theta: 0, z: 0 }, velocity: { linear: 0, angular: 0 }, emergency_stop: true });
  });

  it('logs actuator calls with two decimals', () => {
    const robot = new SimRobot();
    robot.drive(0.4, 0);
    robot.drive(-0.123, -0.0001);
    robot.stop();
    robot.moveTo(1, 2.5, 3);
    robot.setThrust(0.5);
    expect(robot.events).toEqual([
      'drive(0.40 m/s, 0.00 rad/s)',
      'drive(-0.12 m/s, 0.00 rad/s)',
      'stop()',
      'move_to(1.00, 2.50, 3.00)',
      'set_thrust(0.50)',
    ]);
    expect(fixed2(-0.001)).toBe('0.00');
  });

  it('applies a playback state and clears the follow queue', () => {
    const robot = new SimRobot();
    robot.follow([{ x: 3, y: 3 }], 0.5);
    robot.setThrust(2);
    robot.applyState({ pose: { x: 1, y: 2, theta: 0.5, z: 0 }, velocity: { linear: 0.3, angular: 0 }, emergency_stop: true });
    expect(robot.snapshot()).toEqual({ pose: { x: 1, y: 2, theta: 0.5, z: 0 }, velocity: { linear: 0.3, angular: 0 }, emergency_stop: true });
    expect(robot.followQueue).toEqual([]);
    expect(robot.thrust).toBe(0);
  });
});

describe('SafetyMonitor', () => {
  const origin = { x: 0, y: 0, theta: 0, z: 0 };

  it('clamps linear speed to max_speed and angular rate to max_angular, both directions', () => {
    const monitor = new SafetyMonitor({ maxSpeed: 1.2, maxAngular: 0.8, zones: [] });
    expect(monitor.clampDrive(2, 1.5, origin)).toEqual({ linear: 1.2, angular: 0.8 });
    expect(monitor.clampDrive(-3, -2, origin)).toEqual({ linear: -1.2, angular: -0.8 });
    expect(monitor.clampDrive(0.4, 0.1, origin)).toEqual({ linear: 0.4, angular: 0.1 });
    const unlimited = new SafetyMonitor({ maxSpeed: null, maxAngular: null, zones: [] });
    expect(unlimited.clampDrive(9, 9, origin)).toEqual({ linear: 9, angular: 9 });
  });

  it('tightens the cap inside zones (half max_speed unless the zone has a limit)', () => {
    const monitor = new SafetyMonitor({
      maxSpeed: 1.2,
      maxAngular: null,
      zones: [
        { name: 'charging_room', shape: 'circle', x: -4, y: 3, radius: 2.5, speedLimit: null },
        { name: 'plate', shape: 'rect', x: 0, y: 0, width: 1.2, height: 0.8, speedLimit: 0.2 },
      ],
    });
    expect(monitor.clampDrive(1, 0, origin).linear).toBe(0.2);
    expect(monitor.clampDrive(1, 0, { x: -4, y: 1, theta: 0, z: 0 }).linear).toBe(0.6);
    expect(monitor.clampDrive(1, 0, { x: 3, y: 3, theta: 0, z: 0 }).linear).toBe(1);
    expect(zoneContains(monitor.limits.zones[1]!, { x: 0.6, y: 0.4, theta: 0, z: 0 })).toBe(true);
    expect(zoneContains(monitor.limits.zones[1]!, { x: 0.61, y: 0, theta: 0, z: 0 })).toBe(false);
    expect(monitor.clampSpeed(0.5, { x: -4, y: 3, theta: 0, z: 0 })).toBe(0.5);
  });

  it('reports the first stop_if rule that holds', () => {
    let distance = 1;
    const monitor = new SafetyMonitor({ maxSpeed: null, maxAngular: null, zones: [] }, [
      { text: 'lidar . read ( ) . nearest_distance < 0.35m', test: () => distance < 0.35 },
    ]);
    expect(monitor.triggeredStop()).toBeNull();
    distance = 0.3;
    expect(monitor.triggeredStop()?.text).toBe('lidar . read ( ) . nearest_distance < 0.35m');
  });
});
