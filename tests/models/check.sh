#!/usr/bin/env bash
# Model-checks one Promela model with spin, or a negative control of it.
# usage: check.sh MODEL.pml [expect-pass|expect-fail] [SPIN_DEFINES...]
# expect-fail: the test passes only if spin finds a violation (the model
# with its key fence, CAS or re-check removed must be rejected).
set -u
model=$1; expect=${2:-expect-pass}; shift 2 || shift $#
command -v spin >/dev/null || { echo "check.sh: spin not installed (scripts/deps.sh test)"; exit 77; }
cc=${CC:-cc}
case "$cc" in *clang*|*gcc*|cc) ;; *) cc=cc ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$model" "$work/model.pml"
cd "$work"
spin -a "$@" model.pml >spin.log 2>&1 || { cat spin.log; echo "check.sh: spin -a failed"; exit 1; }
# Plain cc without sanitizers: pan is a tool, not project code. -O0: for
# all but the largest state spaces compiling pan.c at -O2 took longer than
# checking (1.5-8 s against well under one), and pan's time goes to storing
# states, which -O2 speeds up by a fifth at most (pipe_link_gate_d3, 9.4M
# states: 5.4 s to compile and 11.1 s to check at -O2, 0.8 and 14.0 at
# -O0); the models suite took 545 test-s at -O2 and 262 at -O0 on this
# 2-core machine. -DSAFETY: safety properties only (assertions, invalid end
# states), so the fairness and never-claim code is left out (-DNOFAIR,
# -DNOCLAIM: no model has a never claim, an LTL formula or progress
# labels); the search itself is the same.
cc -O0 -w -DSAFETY -DNOFAIR -DNOCLAIM -DVECTORSZ=4096 -o pan pan.c 2>cc.log || { cat cc.log; exit 1; }
./pan -m100000 >pan.log 2>&1
errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -1)
grep -E "errors:|assertion violated|invalid end state|states, stored" pan.log
if [ -z "$errors" ]; then cat pan.log; echo "check.sh: could not read pan's result"; exit 1; fi
if [ "$expect" = expect-fail ]; then
  [ "$errors" -gt 0 ] && { echo "negative control rejected as it must be ($*)"; exit 0; }
  echo "check.sh: negative control ($*) was NOT rejected: the model cannot tell"; exit 1
fi
[ "$errors" -eq 0 ] && { echo "model verified"; exit 0; }
./pan -r >trail.log 2>&1; tail -30 trail.log
exit 1
