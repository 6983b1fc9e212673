#!/usr/bin/env bash
# The README's start command: installs what the demo needs and runs the agent on 127.0.0.1:8080
# with the demo project and its emulated devices.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-debian-packages.sh socat mosquitto
npm ci --no-audit --no-fund
exec npm start
