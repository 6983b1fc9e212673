#!/bin/bash
# Run a node script of this repository inside a small qemu VM whose kernel has SocketCAN and vcan.
#
# This machine's kernel (and many CI kernels) has no CAN support at all, so SocketCAN can only be
# exercised for real under a Debian kernel that ships can.ko/can-raw.ko/can-dev.ko/vcan.ko as
# modules. The VM boots that kernel with an initramfs holding busybox, this host's node binary and
# its libraries, `ip`, the compiled hal/ (dist/hal) and the runtime files of the `socketcan` addon;
# /init loads the modules, creates vcan0 (mtu 72) and runs the script, then powers off.
#
# usage: scripts/vcan-vm/run-vcan-test.sh [script-relative-to-repo] [args...]
#        default script: scripts/vcan-vm/socketcan-check.mjs
# needs: qemu-system-x86_64, a static busybox, apt (to fetch the Debian kernel package once), `npm run build`.
# env:   SVC_VCAN_CACHE   kernel cache dir (default: $XDG_CACHE_HOME or ~/.cache, /svc-vcan)
#        SVC_VCAN_TIMEOUT seconds before qemu is killed (default 300)
#        SVC_VCAN_ACCEL   qemu accelerator list, e.g. kvm or kvm,tcg (default tcg)
# output: the VM console (script output included) and a final line `VM_EXIT=<code>`; the exit status
#         is the script's exit status (or 90+ for harness failures).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SCRIPT=${1:-scripts/vcan-vm/socketcan-check.mjs}
shift || true
ARGS=("$@")
CACHE=${SVC_VCAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/svc-vcan}
TIMEOUT=${SVC_VCAN_TIMEOUT:-300}

die() { echo "run-vcan-test: $1" >&2; exit "${2:-91}"; }
for tool in qemu-system-x86_64 busybox node gzip; do
  command -v "$tool" >/dev/null || die "missing tool: $tool" 92
done
BUSYBOX=$(command -v busybox)
# busybox must be static: the VM has only the libraries node needs.
if ldd "$BUSYBOX" >/dev/null 2>&1; then
  for b in /bin/busybox /usr/bin/busybox; do if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then BUSYBOX=$b; fi; done
fi
[ -f "$ROOT/dist/hal/can/socketcan-link.js" ] || die "dist/hal/can/socketcan-link.js missing: run 'npm run build' first" 93
[ -f "$ROOT/$SCRIPT" ] || die "no such script: $SCRIPT" 93

# --- the kernel: fetched once with apt, cached as vmlinuz + the four modules --------------------------
mkdir -p "$CACHE"
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}' || true)
if [ -z "$KPKG" ]; then
  # offline or no apt metadata: use whatever is cached
  KPKG=$(ls -1 "$CACHE" 2>/dev/null | grep '^linux-image-' | sort -V | tail -n 1 || true)
  [ -n "$KPKG" ] || die "cannot resolve linux-image-amd64 (run apt-get update) and nothing cached in $CACHE" 94
fi
KDIR=$CACHE/$KPKG
# concurrent runs share the cache: fetch under a lock
if command -v flock >/dev/null; then exec 9>"$CACHE/.lock"; flock 9; fi
if [ ! -f "$KDIR/ready" ]; then
  echo "run-vcan-test: fetching $KPKG into $KDIR (once)" >&2
  TMPK=$(mktemp -d); trap 'rm -rf "$TMPK"' EXIT
  (cd "$TMPK" && apt-get download "$KPKG" >/dev/null) || die "apt-get download $KPKG failed" 94
  dpkg-deb -x "$TMPK"/"$KPKG"_*.deb "$TMPK/k"
  KV=$(ls "$TMPK/k/lib/modules")
  KM=$TMPK/k/lib/modules/$KV/kernel
  rm -rf "$KDIR"; mkdir -p "$KDIR/mod"
  cp "$TMPK/k/boot/vmlinuz-$KV" "$KDIR/vmlinuz"
  for m in net/can/can net/can/can-raw drivers/net/can/dev/can-dev drivers/net/can/vcan; do
    name=$(basename "$m")
    if [ -f "$KM/$m.ko" ]; then cp "$KM/$m.ko" "$KDIR/mod/$name.ko"
    elif [ -f "$KM/$m.ko.xz" ]; then xz -dc "$KM/$m.ko.xz" > "$KDIR/mod/$name.ko"
    elif [ -f "$KM/$m.ko.zst" ]; then zstd -qdc "$KM/$m.ko.zst" > "$KDIR/mod/$name.ko"
    else die "kernel package has no $m module" 94; fi
  done
  echo "$KV" > "$KDIR/version"; touch "$KDIR/ready"
  rm -rf "$TMPK"; trap - EXIT
fi
if command -v flock >/dev/null; then flock -u 9; exec 9>&-; fi

# --- the initramfs ---------------------------------------------------------------------------------
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
R=$W/root
mkdir -p "$R"/{bin,proc,sys,dev,tmp,mod,lib64,lib/x86_64-linux-gnu,usr/lib/x86_64-linux-gnu,app}
cp "$BUSYBOX" "$R/bin/busybox"
for a in sh mount insmod poweroff cat sleep ls echo; do ln -s busybox "$R/bin/$a"; done
cp "$(readlink -f "$(command -v node)")" "$R/bin/node"
IP=$(command -v ip || echo /sbin/ip); cp "$(readlink -f "$IP")" "$R/bin/ip"
for f in $( (ldd "$R/bin/node"; ldd "$R/bin/ip") | grep -oE '/[^ ]+\.so[^ ]*' | sort -u); do
  mkdir -p "$R$(dirname "$f")"; cp -L "$f" "$R$f"
done
cp "$KDIR"/mod/*.ko "$R/mod/"
# the app: package.json (type: module), dist/hal, the script, and exactly the files `require('socketcan')` loads
cp "$ROOT/package.json" "$R/app/package.json"
mkdir -p "$R/app/dist" "$R/app/$(dirname "$SCRIPT")"
cp -r "$ROOT/dist/hal" "$R/app/dist/hal"
cp "$ROOT/$SCRIPT" "$R/app/$SCRIPT"
(cd "$ROOT" && node -e '
  const { createRequire } = require("node:module"); const path = require("node:path"); const fs = require("node:fs");
  const req = createRequire(path.join(process.cwd(), "package.json"));
  try { req("socketcan"); } catch (e) { console.error("socketcan does not load on the host: " + e.message); process.exit(3); }
  const files = new Set(Object.keys(req.cache));
  for (const f of [...files]) { // each package.json on the way up, so node resolves "main" and "type" inside the VM
    let d = path.dirname(f);
    while (d.startsWith(process.cwd() + "/node_modules")) { const p = path.join(d, "package.json"); if (fs.existsSync(p)) files.add(p); d = path.dirname(d); }
  }
  for (const f of files) if (f.startsWith(process.cwd() + "/")) console.log(path.relative(process.cwd(), f));
') > "$W/files.txt" || die "could not collect the socketcan runtime files" 95
(cd "$ROOT" && while read -r f; do mkdir -p "$R/app/$(dirname "$f")"; cp "$f" "$R/app/$f"; done < "$W/files.txt")

ARGSTR=""
for a in "${ARGS[@]+"${ARGS[@]}"}"; do ARGSTR="$ARGSTR '${a//\'/}'"; done
cat > "$R/init" <<EOI
#!/bin/sh
export PATH=/bin NODE_DISABLE_COLORS=1 NO_COLOR=1
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmp /tmp
for m in can can-raw can-dev vcan; do insmod /mod/\$m.ko || echo "insmod \$m failed"; done
ip link add dev vcan0 type vcan && ip link set vcan0 mtu 72 && ip link set up vcan0
cd /app && node $SCRIPT$ARGSTR; echo "VM_EXIT=\$?"
poweroff -f
EOI
chmod +x "$R/init"
(cd "$R" && find . | "$R/bin/busybox" cpio -o -H newc 2>/dev/null | gzip -1 > "$W/initrd.gz")

# TCG (pure emulation) by default: a boot takes ~20 s and works everywhere. KVM is opt-in
# (SVC_VCAN_ACCEL=kvm): on nested-virtualisation hosts with /dev/kvm present the guest can hang at boot.
SVC_VCAN_ACCEL=${SVC_VCAN_ACCEL:-tcg}
ACCEL=()
IFS=, read -ra accels <<< "$SVC_VCAN_ACCEL"
for a in "${accels[@]}"; do ACCEL+=(-accel "$a"); done
CPU=max; [[ "$SVC_VCAN_ACCEL" == kvm* ]] && CPU=host

set +e
timeout "$TIMEOUT" qemu-system-x86_64 "${ACCEL[@]}" -cpu "$CPU" -m 1536 -smp 2 -nographic -no-reboot \
  -kernel "$KDIR/vmlinuz" -initrd "$W/initrd.gz" -append "console=ttyS0 quiet panic=-1 rdinit=/init" \
  2>&1 | tr -d '\r' | sed -n '/Booting from ROM/,$p' | tail -n +2 | tee "$W/console.txt"
QRC=${PIPESTATUS[0]}
set -e
CODE=$(sed -n 's/^VM_EXIT=\([0-9]*\)$/\1/p' "$W/console.txt" | tail -n 1)
if [ -z "$CODE" ]; then
  [ "$QRC" = 124 ] && die "the VM did not finish within ${TIMEOUT}s" 96
  die "the VM stopped without running the script (qemu exit $QRC)" 97
fi
exit "$CODE"
