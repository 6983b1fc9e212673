/**
 * How a configured device names the program member it serves: `logical_name = "<robot>.<member>"`,
 * e.g. `sentinel.imu` for `sensor imu` of `robot Sentinel` (demo/svc.devices.toml, demo/README.md
 * § Field devices). Traceability finds a member's provider by this name (docs/program-language.md
 * §9.10) and drift check 14 finds a member's logical mapping by it (docs/operations.md § Drift); both
 * call this module so the two can never disagree about which device serves which member.
 */

/** The logical name of `member` of `robot`, as the configuration writes it (compared without case). */
export function memberLogicalName(robot: string, member: string): string {
  return `${robot}.${member}`;
}

/**
 * Whether `logicalName` names `member` of `robot`. Case is ignored: programs write `robot Sentinel`
 * and the demo's configuration `sentinel.imu`. The robot part must be this robot's: `other.imu`
 * does not serve Sentinel's `imu`.
 */
export function namesRobotMember(logicalName: string, robot: string, member: string): boolean {
  return logicalName.toLowerCase() === memberLogicalName(robot, member).toLowerCase();
}
