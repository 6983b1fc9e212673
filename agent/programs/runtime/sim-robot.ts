/**
 * The simulated robot (docs/program-language.md §24.3): a fixed little world (two round obstacles and
 * two walls) and a differential-drive body the interpreter drives. Everything is deterministic —
 * no randomness, no wall clock — so a recorded run can be replayed and compared frame by frame.
 */

export interface Pose {
  x: number;
  y: number;
  theta: number;
  z: number;
}

export interface Velocity {
  linear: number;
  angular: number;
}

/** The robot part of a trace frame state (docs/program-language.md §26) and of the simulation result (§16). */
export interface SimSnapshot {
  pose: Pose;
  velocity: Velocity;
  emergency_stop: boolean;
}

export interface Obstacle {
  x: number;
  y: number;
  radius: number;
}

export const OBSTACLES: readonly Obstacle[] = [
  { x: 2.0, y: 0.0, radius: 0.3 },
  { x: -1.0, y: 1.5, radius: 0.25 },
];
/** Walls stand at x = ±WALL_X. */
export const WALL_X = 5;
export const LIDAR_RANGE = 10;
export const LIDAR_FLOOR = 0.01;
export const DEFAULT_FOLLOW_SPEED = 0.5;
export const CAMERA_WIDTH = 640;
export const CAMERA_HEIGHT = 480;
/** Metres per degree of latitude, used to turn the pose into a GPS fix around (0°, 0°). */
const METRES_PER_DEGREE = 111_320;

/** Two decimals, as every event log string prints numbers. */
export function fixed2(value: number): string {
  const text = value.toFixed(2);
  return text === '-0.00' ? '0.00' : text;
}

export class SimRobot {
  pose: Pose = { x: 0, y: 0, theta: 0, z: 0 };
  velocity: Velocity = { linear: 0, angular: 0 };
  emergencyStop = false;
  /** Waypoints queued by follow(path:), visited in order at `followSpeed`. */
  followQueue: { x: number; y: number }[] = [];
  followSpeed = DEFAULT_FOLLOW_SPEED;
  thrust = 0;
  gripping = false;
  hovering = false;
  /** Sensor types failed by an injected fault (`simulate_compatibility`): they read void. */
  readonly failedSensorTypes = new Set<string>();
  /** An injected `GPSDegraded` health fault: the fix drops to quality 0 with few satellites. */
  gpsDegraded = false;
  /** Health status set by injected health faults (docs/program-language.md §24.1 step 4); not part of the trace state. */
  healthStatus: 'Healthy' | 'Degraded' | 'Critical' = 'Healthy';

  /**
   * @param events the human-readable actuator log (`drive(0.40 m/s, 0.00 rad/s)`, `stop()`, …);
   *   a multi-robot run passes one shared list so the log keeps run order across robots.
   */
  constructor(readonly events: string[] = []) {}

  /** Advance the body by dt seconds (docs/program-language.md §24.3 tick). */
  tick(dtSeconds: number): void {
    if (this.emergencyStop) {
      this.velocity = { linear: 0, angular: 0 };
      return;
    }
    if (this.followQueue.length > 0) {
      this.followWaypoints(dtSeconds);
      return;
    }
    const thetaOld = this.pose.theta;
    this.pose.theta = thetaOld + this.velocity.angular * dtSeconds;
    this.pose.x += this.velocity.linear * Math.cos(thetaOld) * dtSeconds;
    this.pose.y += this.velocity.linear * Math.sin(thetaOld) * dtSeconds;
  }

  /** Move along the queued waypoints by followSpeed·dt, heading toward the current one. */
  private followWaypoints(dtSeconds: number): void {
    let budget = this.followSpeed * dtSeconds;
    while (budget > 0 && this.followQueue.length > 0) {
      const target = this.followQueue[0]!;
      const dx = target.x - this.pose.x;
      const dy = target.y - this.pose.y;
      const distance = Math.hypot(dx, dy);
      if (distance > 0) this.pose.theta = Math.atan2(dy, dx);
      if (distance <= budget) {
        this.pose.x = target.x;
        this.pose.y = target.y;
        budget -= distance;
        this.followQueue.shift();
      } else {
        this.pose.x += (dx / distance) * budget;
        this.pose.y += (dy / distance) * budget;
        budget = 0;
      }
    }
    this.velocity = { linear: this.followQueue.length > 0 ? this.followSpeed : 0, angular: 0 };
  }

  // ---------------------------------------------------------------------------------------------
  // Sensors

  /** Nearest distance: obstacle surfaces (when outside them), the walls, the range; floor 0.01. */
  lidarNearest(): number {
    let nearest = LIDAR_RANGE;
    for (const obstacle of OBSTACLES) {
      const surface = Math.hypot(obstacle.x - this.pose.x, obstacle.y - this.pose.y) - obstacle.radius;
      if (surface > 0) nearest = Math.min(nearest, surface);
    }
    nearest = Math.min(nearest, WALL_X - this.pose.x, this.pose.x + WALL_X);
    return Math.max(LIDAR_FLOOR, nearest);
  }

  lidar(): Record<string, unknown> {
    return { nearest_distance: this.lidarNearest(), range_max: LIDAR_RANGE };
  }

  imu(): Record<string, unknown> {
    return { roll: 0, pitch: 0, yaw: this.pose.theta };
  }

  /**
   * A GPS fix derived from the pose around (0°, 0°); no fix (quality 0) under an emergency stop.
   * An injected GPSDegraded fault drops the quality to 0 with 3 satellites in view.
   */
  gps(): Record<string, unknown> {
    const fixQuality = this.emergencyStop || this.gpsDegraded ? 0 : 1;
    return {
      latitude: this.pose.y / METRES_PER_DEGREE,
      longitude: this.pose.x / METRES_PER_DEGREE,
      altitude: this.pose.z,
      fix_quality: fixQuality,
      satellites: this.emergencyStop ? 0 : this.gpsDegraded ? 3 : 8,
    };
  }

  camera(): Record<string, unknown> {
    return { width: CAMERA_WIDTH, height: CAMERA_HEIGHT, encoding: 'rgb8' };
  }

  forceTorque(): Record<string, unknown> {
    return { force: { x: 0, y: 0, z: this.gripping ? 5 : 0 }, torque: { x: 0, y: 0, z: 0 } };
  }

  altitude(): Record<string, unknown> {
    return { altitude: this.pose.z };
  }

  /** Read a sensor by its declared type; null (void) for types the simulator does not model. */
  readSensor(type: string): Record<string, unknown> | null {
    if (this.failedSensorTypes.has(type)) return null;
    switch (type) {
      case 'Lidar':
        return this.lidar();
      case 'IMU':
        return this.imu();
      case 'GPS':
      case 'GNSS':
        return this.gps();
      case 'Camera':
        return this.camera();
      case 'ForceTorque':
        return this.forceTorque();
      case 'AltitudeSensor':
        return this.altitude();
      default:
        return null;
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Actuators (already clamped by the safety monitor; an e-stop blocks motion before these run)

  drive(linear: number, angular: number): void {
    this.followQueue = [];
    this.velocity = { linear, angular };
    this.events.push(`drive(${fixed2(linear)} m/s, ${fixed2(angular)} rad/s)`);
  }

  stop(): void {
    this.followQueue = [];
    this.velocity = { linear: 0, angular: 0 };
    this.events.push('stop()');
  }

  follow(path: { x: number; y: number }[], speed: number): void {
    this.followQueue = path.map((point) => ({ x: point.x, y: point.y }));
    this.followSpeed = speed;
    this.velocity = { linear: this.followQueue.length > 0 ? speed : 0, angular: 0 };
    this.events.push(`follow(${path.length} waypoints, ${fixed2(speed)} m/s)`);
  }

  /** Re-clamp the cruise speed of a running follow (loop iterations do this before ticking). */
  clampFollowSpeed(maxSpeed: number): void {
    if (this.followSpeed > maxSpeed) this.followSpeed = maxSpeed;
    if (this.followQueue.length > 0) this.velocity.linear = this.followSpeed;
  }

  moveTo(x: number, y: number, z: number): void {
    this.followQueue = [];
    this.velocity = { linear: 0, angular: 0 };
    this.pose = { x, y, theta: this.pose.theta, z };
    this.events.push(`move_to(${fixed2(x)}, ${fixed2(y)}, ${fixed2(z)})`);
  }

  grip(): void {
    this.gripping = true;
    this.events.push('grip()');
  }

  release(): void {
    this.gripping = false;
    this.events.push('release()');
  }

  open(): void {
    this.gripping = false;
    this.events.push('open()');
  }

  setThrust(value: number): void {
    this.thrust = value;
    this.hovering = false;
    this.events.push(`set_thrust(${fixed2(value)})`);
  }

  hover(): void {
    this.hovering = true;
    this.velocity = { linear: 0, angular: 0 };
    this.events.push('hover()');
  }

  execute(action: string): void {
    this.events.push(`execute(${action})`);
  }

  /** Latch the emergency stop: velocity 0 now and on every tick until a playback state clears it. */
  latchEmergencyStop(): void {
    if (!this.emergencyStop) this.events.push('emergency_stop()');
    this.emergencyStop = true;
    this.followQueue = [];
    this.velocity = { linear: 0, angular: 0 };
  }

  /** Log a non-motion runtime event (`publish(/topic, Type)`, `service(n)`, `action(n)`). */
  log(event: string): void {
    this.events.push(event);
  }

  snapshot(): SimSnapshot {
    return {
      pose: { ...this.pose },
      velocity: { ...this.velocity },
      emergency_stop: this.emergencyStop,
    };
  }

  /** Playback (docs/program-language.md §27): set pose, velocity and e-stop; clear the follow queue; thrust 0. */
  applyState(state: SimSnapshot): void {
    this.pose = { x: state.pose.x, y: state.pose.y, theta: state.pose.theta, z: state.pose.z ?? 0 };
    this.velocity = { linear: state.velocity.linear, angular: state.velocity.angular };
    this.emergencyStop = state.emergency_stop;
    this.followQueue = [];
    this.thrust = 0;
  }
}
