#!/usr/bin/env bash
# The README's main command: installs what is missing, builds dagc, the
# runtime and the example (dagc compiles examples/ at build time and Graphviz
# renders the diagram), then runs the frame pipeline.
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh example
B=build
if [ -d "$B" ]; then meson setup --reconfigure "$B" -Dtests=disabled -Dbench_peers=disabled >/dev/null
else meson setup "$B" -Dtests=disabled -Dbench_peers=disabled -Dbuildtype=release >/dev/null; fi
meson compile -C "$B"
if [ -x "$B/examples/frame/frame" ]; then
  exec "$B/examples/frame/frame" "$@"
else
  "$B/dagc/dagc" --stats examples/frame/frame.dag
  echo "diagram: $B/examples/frame/frame.svg"
fi
