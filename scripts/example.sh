#!/usr/bin/env bash
# The README's main command: installs what is missing, builds dagc, the
# runtime and the example (dagc compiles examples/ at build time and Graphviz
# renders the diagram), then runs the frame pipeline, records its trace and
# draws the measured diagram beside the declared one. Its arguments go to the
# program: scripts/example.sh [FRAMES] [--in-flight N] (docs/example.md).
set -eu
cd "$(dirname "$0")/.."
scripts/deps.sh example
B=build
if [ -d "$B" ]; then meson setup --reconfigure "$B" -Dtests=disabled -Dbenchmarks=disabled -Dbench_peers=disabled >/dev/null
else meson setup "$B" -Dtests=disabled -Dbenchmarks=disabled -Dbench_peers=disabled -Dbuildtype=release >/dev/null; fi
meson compile -C "$B"
if [ -x "$B/examples/frame/frame" ]; then
  # The run also records its trace (libdagrt's DAGRT_TRACE), and dagc draws
  # what it measured beside the declared diagram.
  d="$B/examples/frame"
  DAGRT_TRACE="$d/frame.trace.json" "$d/frame" "$@"
  "$B/dagc/dagc" --profile "$d/frame.trace.json" --dot "$d/frame.measured.dot" examples/frame/frame.dag
  measured="$d/frame.measured.dot"
  if command -v dot >/dev/null; then
    dot -Tsvg "$d/frame.measured.dot" -o "$d/frame.measured.svg"
    measured="$d/frame.measured.svg"
  fi
  echo "trace: $d/frame.trace.json (open it in Perfetto's UI, ui.perfetto.dev, or in speedscope)"
  echo "declared diagram: $d/frame.svg"
  echo "measured diagram: $measured"
else
  "$B/dagc/dagc" --stats examples/frame/frame.dag
  echo "diagram: $B/examples/frame/frame.svg"
fi
