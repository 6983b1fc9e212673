#!/usr/bin/env bash
# The one test command (README, .ci/run): installs what the suite needs on a fresh Debian machine with
# Node 20, builds, runs every test, and ends with a plain "N passed, N failed, N skipped" line.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests drive as real peers: pseudo-terminals (socat) and an MQTT broker
# (mosquitto), pdftoppm (poppler-utils) that renders exported PDF reports, and python3 that runs the
# Python client's tests (clients/python) against a live agent, and chromium that the web panel's browser tests
# drive headless (test/panel, playwright-core). qemu-system-x86 + busybox-static enable the SocketCAN VM test; without them it is
# reported as skipped.
bash scripts/ensure-debian-packages.sh socat mosquitto poppler-utils python3 chromium ${SVC_TEST_DEBIAN_PACKAGES:-}

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
