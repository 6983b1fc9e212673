#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the suite needs on a fresh Debian machine with
# Node 20, builds, runs every test, and ends with a plain "N passed, N failed, N skipped" line.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests drive as real peers (pseudo-terminals, MQTT broker, CAN VM).
DEBIAN_PACKAGES=(socat mosquitto ${SVC_TEST_DEBIAN_PACKAGES:-})
missing=()
for pkg in "${DEBIAN_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm ci also compiles the agent (the `prepare` script), which the CLI and crash tests spawn.
npm ci --no-audit --no-fund
npm run typecheck

mkdir -p test-results
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results/vitest.json || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync("test-results/vitest.json", "utf8"));
  const skipped = (r.numPendingTests || 0) + (r.numTodoTests || 0);
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
  if (r.numTotalTests === 0) process.exit(1);
' || status=1
exit $status
