#!/usr/bin/env bash
# Installs the Debian packages a task needs, when missing.
# usage: scripts/deps.sh example|test|bench|sanitize|viewer|all
# As root it runs apt-get; otherwise it prints the exact command to run.
set -u
want=()
case "${1:-test}" in
  example)  want=(gcc meson ninja-build re2c lemon graphviz pkg-config python3 liburing-dev) ;;
  test)     want=(gcc make meson ninja-build re2c lemon graphviz pkg-config python3 liburing-dev
                  libcriterion-dev spin clang libclang-rt-14-dev g++ cmake vim neovim libcapstone-dev
                  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
                  gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 wine wine64) ;;
  bench)    want=(gcc g++ meson ninja-build re2c lemon graphviz pkg-config python3 liburing-dev
                  libcriterion-dev libtbb-dev libgomp1) ;;
  sanitize) want=(gcc meson ninja-build re2c lemon graphviz pkg-config python3 liburing-dev
                  libcriterion-dev clang libclang-rt-14-dev) ;;
  # The slow suite's trace_speedscope_view: speedscope comes from npm at
  # test time (under the build dir), Chromium runs it headless.
  # A machine whose Node.js did not come from Debian keeps it: Debian's
  # nodejs and npm packages conflict with such an install.
  viewer)   want=(chromium python3)
            { command -v node && command -v npm; } >/dev/null 2>&1 || want+=(nodejs npm) ;;
  all)      "$0" test && "$0" bench && "$0" viewer; exit $? ;;
  *) echo "usage: $0 example|test|bench|sanitize|viewer|all" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || apt-get update
  apt-get install -y -qq "${missing[@]}" >/dev/null || apt-get install -y "${missing[@]}" || exit 2
else
  echo "deps: missing Debian packages; run as root:" >&2
  echo "  apt-get install -y ${missing[*]}" >&2
  exit 2
fi
