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
# and prints one Markdown table per benchmark, a column per W, with the
# machine named above them; also written to OUT (default
# build-scaling/scaling-HOST-DATE.md). Keep the result in
# docs/benchmarks.md with the machine named.
#
# usage: scripts/scaling.sh [--quick] [--workers "1 3 7 15"] [--out FILE]
#   --quick  bench_frame --quick, bench_rt_dagrt --quick, bench_io 1 round:
#            a check that everything runs and parses (minutes, not tens)
# On a machine with fewer CPUs than W + 1 the rows oversubscribe it: the
# table says how many CPUs there were.
set -u
cd "$(dirname "$0")/.."
quick=0
workers="1 3 7 15"
out=
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --workers) workers=${2:?--workers needs a list}; shift ;;
    --out) out=${2:?--out needs a file}; shift ;;
    *) echo "usage: $0 [--quick] [--workers \"1 3 7 15\"] [--out FILE]" >&2; exit 2 ;;
  esac
  shift
done
for w in $workers; do
  case "$w" in ''|*[!0-9]*) echo "scaling.sh: not a worker count: $w" >&2; exit 2 ;; esac
done
scripts/deps.sh example >/dev/null || exit 2

B=build-scaling
if [ -d "$B/meson-private" ]; then
  meson setup --reconfigure "$B" --buildtype=release >/dev/null || exit 1
else
  meson setup "$B" --buildtype=release >/dev/null || exit 1
fi
meson compile -C "$B" bench/frame/bench_frame bench/runtime/bench_rt_dagrt bench/io/bench_io >/dev/null || exit 1

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
  echo "scaling.sh: $w worker(s)" >&2
  "$B/bench/frame/bench_frame" --workers "$w" "${frame_args[@]}" >"$raw/frame.$w" 2>&1 ||
    echo "scaling.sh: bench_frame --workers $w failed (see $raw/frame.$w)" >&2
  "$B/bench/runtime/bench_rt_dagrt" --workers "$w" "${rt_args[@]}" >"$raw/rt.$w" 2>&1 ||
    echo "scaling.sh: bench_rt_dagrt --workers $w failed (see $raw/rt.$w)" >&2
  "$B/bench/io/bench_io" --workers "$w" "${io_args[@]}" >"$raw/io.$w" 2>&1 ||
    echo "scaling.sh: bench_io --workers $w failed (see $raw/io.$w)" >&2
done

cpus=$(nproc 2>/dev/null || echo "?")
model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
python3 - "$raw" "$cpus" "$model" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" \
  "$stamp" "$quick" $workers >"$out" <<'PY'
import os, re, sys
raw, cpus, model, commit, stamp, quick = sys.argv[1:7]
ws = sys.argv[7:]

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

sections = [("bench_frame, 1 us bodies: us per frame (x serial)", frame, "")]
for name in shape_names():
    sections.append(("bench_frame, uneven frame %s: us per frame (x its lower bound; the peers "
                     "on workers + 1 threads)" % name, shape(name), ""))
sections += [("bench_rt_dagrt", rt, ""), ("bench_io: median (ratio to the raw system)", io, "")]
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
