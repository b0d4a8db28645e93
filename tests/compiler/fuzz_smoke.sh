#!/bin/sh
# Bounded libFuzzer smoke: SECONDS of fuzzing (a short run in the default
# suite, a longer one in suite slow). New inputs go to a scratch corpus in
# the build directory; the seeds are only read (libFuzzer writes into its
# first corpus directory, which must not be the source tree). A seed that
# is a file is copied into the scratch corpus, a directory is read as is.
# usage: fuzz_smoke.sh FUZZER SCRATCH_DIR SECONDS SEED...
set -eu
fuzzer=$1 scratch=$2 secs=$3
shift 3
mkdir -p "$scratch"
dirs=
for s in "$@"; do
    if [ -d "$s" ]; then dirs="$dirs $s"; else cp "$s" "$scratch/"; fi
done
# shellcheck disable=SC2086 # the seed directories (no spaces in build paths)
exec "$fuzzer" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=1024 "$scratch" $dirs
