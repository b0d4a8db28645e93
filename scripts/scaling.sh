#!/usr/bin/env bash
# The benchmarks at every worker count, in one go, into one table: what to
# run when a machine with more cores is lent (the `device` tool's 16-core
# machines). Builds a release build (build-scaling/, tests off), then for
# each worker count W runs
#   bench_frame --workers W      every row (the peers too, where built) of
#                                the uniform frame and of the uneven ones
#                                (game-shaped, random layered: the peers
#                                there run W + 1 threads, on the uniform
#                                frame 2)
#   bench_rt_dagrt --workers W   spawn tree, fib, parallel-for, wake-ups
#   bench_io --workers W         the I/O rows
#   bench_frame pinned and not   DAGRT_PLACEMENT=pin and =none side by
#                                side (core/placement.c), the uniform and
#                                game frames, libdagrt's rows only, ROUNDS
#                                rounds alternating which goes first
# and prints one Markdown table per benchmark, a column per W, with the
# machine named above them; also written to OUT (default
# build-scaling/scaling-HOST-DATE.md). Keep the result in
# docs/benchmarks.md with the machine named.
#
# usage: scripts/scaling.sh [--quick] [--workers "1 3 7 15"] [--out FILE]
#                           [--pin-rounds ROUNDS] [--placement-only]
#   --quick  bench_frame --quick, bench_rt_dagrt --quick, bench_io 1 round:
#            a check that everything runs and parses (minutes, not tens)
#   --pin-rounds ROUNDS  rounds of the pinned/unpinned pair (default 3;
#            0 skips it)
#   --placement-only  only the pinned/unpinned pair
# On a machine with fewer CPUs than W + 1 the rows oversubscribe it: the
# table says how many CPUs there were.
set -u
cd "$(dirname "$0")/.."
quick=0
workers="1 3 7 15"
out=
pin_rounds=3
only_place=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --workers) workers=${2:?--workers needs a list}; shift ;;
    --out) out=${2:?--out needs a file}; shift ;;
    --pin-rounds) pin_rounds=${2:?--pin-rounds needs a count}; shift ;;
    --placement-only) only_place=1 ;;
    *) echo "usage: $0 [--quick] [--workers \"1 3 7 15\"] [--out FILE] [--pin-rounds N] [--placement-only]" >&2; exit 2 ;;
  esac
  shift
done
for w in $workers; do
  case "$w" in ''|*[!0-9]*) echo "scaling.sh: not a worker count: $w" >&2; exit 2 ;; esac
done
case "$pin_rounds" in ''|*[!0-9]*) echo "scaling.sh: not a round count: $pin_rounds" >&2; exit 2 ;; esac
[ $only_place = 1 ] && [ "$pin_rounds" = 0 ] && { echo "scaling.sh: --placement-only with 0 rounds" >&2; exit 2; }
scripts/deps.sh example >/dev/null || exit 2
# The peers' packages (oneTBB, OpenMP): where they cannot be installed (a
# machine without apt's network), their rows are left out, not the run.
scripts/deps.sh bench >/dev/null 2>&1 ||
  echo "scaling.sh: the bench group's packages (scripts/deps.sh bench) are missing: oneTBB's rows are left out" >&2

B=build-scaling
if [ -d "$B/meson-private" ]; then
  meson setup --reconfigure "$B" --buildtype=release >/dev/null || exit 1
else
  meson setup "$B" --buildtype=release >/dev/null || exit 1
fi
targets=(bench/frame/bench_frame)
[ $only_place = 1 ] || targets+=(bench/runtime/bench_rt_dagrt bench/io/bench_io)
meson compile -C "$B" "${targets[@]}" >/dev/null || exit 1

host=$(hostname 2>/dev/null || echo host)
stamp=$(date -u +%Y%m%dT%H%MZ)
[ -n "$out" ] || out=$B/scaling-$host-$stamp.md
raw=$B/scaling-raw-$stamp
mkdir -p "$raw"

if [ $quick = 1 ]; then
  frame_args=(--quick); rt_args=(--quick); io_args=(1 4000)
else
  frame_args=(--runs 5); rt_args=(); io_args=(5 20000)
fi
for w in $workers; do
  [ $only_place = 1 ] && break
  echo "scaling.sh: $w worker(s)" >&2
  "$B/bench/frame/bench_frame" --workers "$w" "${frame_args[@]}" >"$raw/frame.$w" 2>&1 ||
    echo "scaling.sh: bench_frame --workers $w failed (see $raw/frame.$w)" >&2
  "$B/bench/runtime/bench_rt_dagrt" --workers "$w" "${rt_args[@]}" >"$raw/rt.$w" 2>&1 ||
    echo "scaling.sh: bench_rt_dagrt --workers $w failed (see $raw/rt.$w)" >&2
  "$B/bench/io/bench_io" --workers "$w" "${io_args[@]}" >"$raw/io.$w" 2>&1 ||
    echo "scaling.sh: bench_io --workers $w failed (see $raw/io.$w)" >&2
done

# Pinned and not, side by side: the same bench_frame under DAGRT_PLACEMENT=pin
# (each worker on one CPU, core/placement.c) and =none (no affinity call),
# the order alternating round by round so that neither always runs first.
for w in $workers; do
  for k in $(seq 1 "$pin_rounds"); do
    if [ $((k % 2)) = 1 ]; then order="pin none"; else order="none pin"; fi
    for p in $order; do
      echo "scaling.sh: $w worker(s), DAGRT_PLACEMENT=$p, round $k" >&2
      DAGRT_PLACEMENT=$p "$B/bench/frame/bench_frame" --workers "$w" --frame uniform,game \
        --only libdagrt "${frame_args[@]}" >"$raw/place-$p.$w.$k" 2>&1 ||
        echo "scaling.sh: DAGRT_PLACEMENT=$p bench_frame --workers $w failed (see $raw/place-$p.$w.$k)" >&2
    done
  done
done

cpus=$(nproc 2>/dev/null || echo "?")
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
python3 - "$raw" "$cpus" "$model" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
  "$stamp" "$quick" "$pin_rounds" "$only_place" $workers >"$out" <<'PY'
import os, re, sys
raw, cpus, model, commit, stamp, quick, pin_rounds, only_place = sys.argv[1:9]
ws = sys.argv[9:]

def read(kind, w):
    p = os.path.join(raw, "%s.%s" % (kind, w))
    return open(p, errors="replace").read().splitlines() if os.path.exists(p) else []

# bench_frame's main table: contender, threads, empty (best), 1 us (best),
# x serial, x serial. The 1 us median and its x serial.
frame_row = re.compile(r"^(\S.*?)\s{2,}(\S.*?)\s{2,}([\d.]+) \([\d.]+\)\s+([\d.]+) \([\d.]+\)\s+([\d.]+)\s+([\d.]+)\s*$")
def frame(w):
    rows, on = {}, False
    for l in read("frame", w):
        if l.startswith("contender") and "empty bodies" in l:
            on = True
            continue
        if on and not l.strip():
            break
        m = frame_row.match(l) if on else None
        if m:
            rows[m.group(1)] = "%s us (%sx)" % (m.group(4), m.group(6))
    return rows

def rt(w):
    rows = {}
    for l in read("rt", w):
        p = l.split()
        if len(p) >= 3 and p[0] == "RESULT":
            rows[p[1]] = "%s %s" % (p[2], p[3] if len(p) > 3 else "")
    return rows

io_row = re.compile(r"^(\S+)\s.*?median\s+(\d+) ns \|.*ratio \(median\) ([\d.]+)x")
def io(w):
    rows = {}
    for l in read("io", w):
        m = io_row.match(l)
        if m:
            rows[m.group(1)] = "%s ns (%sx raw)" % (m.group(2), m.group(3))
        elif l.startswith("served"):
            m = re.search(r"median\s+(\d+)", l)
            if m:
                rows["served"] = "%s completions / 16.7 ms" % m.group(1)
    return rows

print("# Scaling: %s, %s CPUs (%s), commit %s%s" % (stamp, cpus, model or "?", commit,
      ", --quick" if quick == "1" else ""))
print()
print("Worker counts are the runtime's workers beside the calling thread;")
print("columns with more threads than CPUs oversubscribe the machine.")
# bench_frame's uneven frames (shapes.c): a section per frame, from its
# "== frame NAME:" line: the bounds, then contender, us (best), x bound,
# x serial.
shape_row = re.compile(r"^(\S.*?)\s{2,}([\d.]+) \([\d.]+\)\s+([\d.]+)\s+([\d.]+)\s*$")
bounds_re = re.compile(r"bounds: one frame at a time max\(cp, work/\d+\) = ([\d.]+) us, pipeline work/\d+ = ([\d.]+) us")
def shape_names():
    names = []
    for w in ws:
        for l in read("frame", w):
            m = re.match(r"^== frame (\w+):", l)
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return names
def shape(name):
    def rows(w):
        out, on = {}, False
        for l in read("frame", w):
            if l.startswith("== frame "):
                on = l.startswith("== frame %s:" % name)
                continue
            if not on:
                continue
            m = bounds_re.search(l)
            if m:
                out["lower bound (one at a time; pipeline)"] = "%s us; %s us" % (m.group(1), m.group(2))
                continue
            m = shape_row.match(l)
            if m:
                out[m.group(1)] = "%s us (%sx bound)" % (m.group(2), m.group(3))
            elif l.startswith("checked run") and "ordering ok" not in l:
                # "checked run NAME CONTENDER  RESULT": a failed check is a row.
                who = l[len("checked run "):].split(None, 1)[1].rsplit("  ", 1)[0].strip()
                out["checked run: " + who] = "FAILED"
        return out
    return rows

# Pinned over unpinned: each round's pair gives a ratio (pin / none, under 1:
# pinning helps); the table shows the median of the rounds' times, the
# median ratio and the rounds' ratios' range (the spread).
def place_rows(p, w, k):
    out, on, frame_name = {}, False, "uniform"
    for l in read("place-" + p, "%s.%d" % (w, k)):
        if l.startswith("contender") and "empty bodies" in l:
            on = True
            continue
        if l.startswith("== frame "):
            frame_name = l[len("== frame "):].split(":")[0]
            continue
        if frame_name == "uniform" and on and not l.strip():
            on = False
        m = frame_row.match(l) if (on and frame_name == "uniform") else None
        if m:
            out["uniform, 1 us: " + m.group(1)] = float(m.group(4))
            continue
        m = shape_row.match(l) if frame_name != "uniform" else None
        if m:
            out[frame_name + ": " + m.group(1)] = float(m.group(2))
    return out
def med(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
def place(w):
    rows = {}
    pairs = [(place_rows("pin", w, k), place_rows("none", w, k)) for k in range(1, int(pin_rounds) + 1)]
    names = []
    for a, b in pairs:
        for n in a:
            if n in b and n not in names and not n.endswith("serial calls"):
                names.append(n)
    for n in names:
        pins = [a[n] for a, b in pairs if n in a and n in b and b[n] > 0]
        nones = [b[n] for a, b in pairs if n in a and n in b and b[n] > 0]
        ratios = [x / y for x, y in zip(pins, nones)]
        if ratios:
            rows[n] = "%.1f / %.1f us: %.2fx (%.2f-%.2f)" % (med(pins), med(nones), med(ratios),
                                                            min(ratios), max(ratios))
    return rows

sections = []
if only_place != "1":
    sections = [("bench_frame, 1 us bodies: us per frame (x serial)", frame, "")]
    for name in shape_names():
        sections.append(("bench_frame, uneven frame %s: us per frame (x its lower bound; the peers "
                         "on workers + 1 threads)" % name, shape(name), ""))
    sections += [("bench_rt_dagrt", rt, ""), ("bench_io: median (ratio to the raw system)", io, "")]
if pin_rounds != "0":
    sections.append(("bench_frame pinned over unpinned (DAGRT_PLACEMENT=pin / =none, %s rounds "
                     "alternating): median us per frame pin / none: median ratio (range)" % pin_rounds,
                     place, ""))
for title, fn, unit in sections:
    tables = {w: fn(w) for w in ws}
    names = []
    for w in ws:
        for n in tables[w]:
            if n not in names:
                names.append(n)
    print()
    print("## " + title)
    print()
    print("| row | " + " | ".join("%s worker%s" % (w, "" if w == "1" else "s") for w in ws) + " |")
    print("| --- |" + " --- |" * len(ws))
    for n in names:
        print("| %s | %s |" % (n, " | ".join(tables[w].get(n, "-") for w in ws)))
    if not names:
        print("| (nothing parsed: see the raw output) |" + " |" * len(ws))
print()
print("Raw output: %s" % raw)
PY
rc=$?
cat "$out"
echo "scaling.sh: written to $out" >&2
exit $rc
