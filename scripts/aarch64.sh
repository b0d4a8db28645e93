#!/usr/bin/env bash
# AArch64: cross-build with gcc-aarch64-linux-gnu and run under qemu-user.
#
#   scripts/aarch64.sh            full: Meson cross build in build-aarch64/
#                                 (scripts/cross/aarch64-linux-gnu.txt) of the
#                                 runtime and its plain C test drivers, then
#                                 `meson test` through qemu-aarch64.
#   scripts/aarch64.sh --smoke DIR
#                                 short: compiles the runtime and the fiber
#                                 driver straight with the cross compiler into
#                                 DIR and runs it under qemu (DAGC_TEST_SCALE
#                                 0.1). This is the `aarch64_smoke` test of the
#                                 default suite.
# Criterion has no arm64 build in Debian's cross set, so the cross tests are
# the plain drivers (the same scenario functions the Criterion tests call).
set -eu
cd "$(dirname "$0")/.."
CC=${AARCH64_CC:-aarch64-linux-gnu-gcc}
QEMU=${QEMU_AARCH64:-qemu-aarch64}
SYSROOT=/usr/aarch64-linux-gnu

if [ "${1:-}" = --smoke ]; then
  out=${2:?usage: $0 --smoke OUTDIR}
  mkdir -p "$out"
  for t in "$CC" "$QEMU"; do
    command -v "$t" >/dev/null || { echo "aarch64: $t missing: run scripts/deps.sh test" >&2; exit 1; }
  done
  cflags=(-std=c11 -O2 -g -Wall -Wextra -Wpedantic -pthread
          -DDAGRT_CTX_AARCH64 -DDAGRT_INSIDE_=1 -Iruntime -Iruntime/include -Itests/fiber -Itests/scenario)
  objs=()
  # Every runtime C file (the core and its Linux system layer, the I/O calls on
  # the epoll reactor: no liburing for the cross target) plus the AArch64
  # switch; compiled one by one so a failure names its file.
  for src in runtime/core/*.c runtime/fiber/*.c runtime/wait/*.c runtime/exec/*.c runtime/pfor/*.c runtime/trace/*.c runtime/os/os_once.c runtime/os/topo.c runtime/os/reactor.c runtime/os/os_linux.c runtime/os/cpu_linux.c runtime/os/file_linux.c runtime/os/io_linux.c runtime/os/reactor_epoll.c runtime/arch/ctx_make.c runtime/arch/switch_aarch64_aapcs.S \
             tests/fiber/fiber_scenarios.c tests/fiber/regs_aarch64.S \
             tests/fiber/sync_scenarios.c tests/fiber/fiber_table.c \
             tests/scenario/scenario.c tests/scenario/driver.c; do
    o="$out/$(echo "$src" | tr / _).o"
    "$CC" "${cflags[@]}" -c "$src" -o "$o"
    objs+=("$o")
  done
  "$CC" -pthread -o "$out/fiber_drv" "${objs[@]}"
  aarch64-linux-gnu-readelf -h "$out/fiber_drv" | grep -q AArch64 || { echo "aarch64: not an AArch64 binary" >&2; exit 1; }
  DAGC_TEST_SCALE=${DAGC_TEST_SCALE:-0.1} "$QEMU" -L "$SYSROOT" "$out/fiber_drv"
  exit $?
fi

scripts/deps.sh test || exit 2
B=build-aarch64
opts=(-Dtests=auto -Dbench_peers=disabled --cross-file scripts/cross/aarch64-linux-gnu.txt)
if [ -d "$B" ]; then meson setup --reconfigure "$B" "${opts[@]}" >/dev/null
else meson setup "$B" "${opts[@]}" >/dev/null; fi
meson compile -C "$B"
meson test -C "$B" --print-errorlogs --num-processes 2 "$@"
