#!/usr/bin/env bash
# Installs the Debian packages given as arguments when they are missing (socat, mosquitto, ...).
# Used by the two README commands; does nothing when everything is there.
set -euo pipefail
missing=()
for pkg in "$@"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "note: apt-get not found; install ${missing[*]} yourself for the emulated devices and their tests" >&2
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
