#!/bin/sh
# 30-second libFuzzer smoke (suite slow). New inputs go to a scratch corpus
# in the build directory; the golden files are only read as seeds (libFuzzer
# writes into its first corpus directory, which must not be the source tree).
# usage: fuzz_smoke.sh FUZZER SCRATCH_DIR SEED_DIR
set -eu
mkdir -p "$2"
exec "$1" -max_total_time=30 -max_len=4096 -timeout=10 -rss_limit_mb=1024 "$2" "$3"
