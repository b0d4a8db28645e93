#!/usr/bin/env bash
# Times dagc on generated graphs: --check, --dot and C output (-o DIR) for
# 1k, 10k and 100k nodes (--1m: also 1,048,576; --doubling: 16k to 256k,
# each twice the one before), wall time, CPU time and peak memory, with the
# growth per doubling; then the race-check workloads of language v2, or a
# line saying why they were skipped. Every run has a time limit
# (--timeout S, default 60): a slow size prints "timeout".
# usage: bench/compiler/run.sh [DAGC] [REPS] [--doubling] [--1m] [--timeout S]
#                              [--modes check,dot,c] [--no-races]
#        bench/compiler/run.sh [DAGC] [REPS] --race-scale [--before OLD_DAGC]
#        bench/compiler/run.sh [DAGC] [REPS] --suggest [--before OLD_DAGC]
# (--race-scale: the race check on a writer chain, layers and a fan-out at
# 20k to 1,048,576 nodes, old and new dagc side by side; --suggest: "did you
# mean" for 20 unknown names among 100k and 200k names sharing a
# 56-character prefix, and the same files without them; run.py says more)
set -eu
cd "$(dirname "$0")/../.."
exec python3 bench/compiler/run.py "$@"
