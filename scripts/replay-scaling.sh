#!/usr/bin/env bash
# Scaling benchmark of fdreplay (docs/experiments.md, "fdreplay at every
# size").
# Generates traces of N heartbeats (10 senders, Δ = 10 ms, lognormal delays
# of 1 ms + 2 ms ± 1 ms, 0.5 ms jitter, 1 % loss: the trace of issue 24),
# replays each with --out and all default detectors, and prints wall and
# user time, records per second, peak RSS (MiB: GNU time's %M in KiB / 1024)
# and the load average.
#
#   scripts/replay-scaling.sh [N...]            # default: 1e5 1e6 1e7
#   OLD=/path/to/old/fdreplay REPEAT=3 scripts/replay-scaling.sh 1e6
#   ARGS='-d fixed,chen --points 4' scripts/replay-scaling.sh 1e6 1e8
#   scripts/replay-scaling.sh senders           # 10^6 senders, one heartbeat each
#
# ARGS are passed to every fdreplay run (for example a smaller detector set,
# so that 10^8 finishes on a shared machine). Peak RSS is GNU time's %M of
# fdreplay alone; the load average is the 1-minute one when the run ends
# (the machine may be shared: compare rows taken side by side only).
#
# With OLD set (an older fdreplay binary: build it from a worktree of the
# old commit, never commit it), the new and the old binary replay the same
# trace in turn, REPEAT times (default 1), alternating, so that both see
# the same load; runs are niced. The "senders" size is ten 10^5-sender
# fdgen runs of one 10 ms interval concatenated. Traces are written to a
# temporary directory (never committed) and removed; above 1e7 as ten
# one-sender fdgen runs (seeds 1 to 10) concatenated, since fdgen holds a
# whole trace in memory (about 110 bytes a record).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/fdreplay" ./cmd/fdreplay
go build -o "$tmp/fdgen" ./cmd/fdgen
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1e5 1e6 1e7)
read -r -a args <<<"${ARGS:-}"
repeat=${REPEAT:-1}
printf '| binary | heartbeats | wall s | user s | sys s | records/s | peak RSS MiB | exit | load |\n|---|---|---|---|---|---|---|---|---|\n'
run() { # label n cmd...
  local label=$1 n=$2 code=0; shift 2
  rm -rf "$tmp/out"
  nice /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || code=$?
  [ "$code" -eq 0 ] || tail -n 2 "$tmp/err" >&2
  local wall user sys kb
  read -r wall user sys kb < <(tail -n 1 "$tmp/time")
  awk -v l="$label" -v n="$n" -v w="$wall" -v u="$user" -v s="$sys" -v kb="$kb" -v c="$code" -v ld="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "| %s | %d | %.1f | %.1f | %.1f | %.0f | %.0f | %d | %s |\n", l, n, w, u, s, n / (w > 0 ? w : 1), kb / 1024, c, ld }'
}
common=(--interval 10ms --delay lognormal --delay-base 1ms --delay-mean 2ms --delay-sd 1ms --jitter 500us --loss 0.01 --compress none)
for s in "${sizes[@]}"; do
  : >"$tmp/t.fdk"
  if [ "$s" = senders ]; then
    for i in 0 1 2 3 4 5 6 7 8 9; do
      "$tmp/fdgen" "${common[@]}" --duration 10ms --senders 100000 --sender "s${i}x" --seed $((i + 1)) -o "$tmp/part.fdk"
      if [ "$i" -eq 0 ]; then cat "$tmp/part.fdk"; else tail -n +4 "$tmp/part.fdk"; fi >>"$tmp/t.fdk"
    done
  else
    n=$(awk -v s="$s" 'BEGIN { printf "%d", s }')
    dur="$((n / 1000))s" # 10 senders × 100 heartbeats per second
    if [ "$n" -gt 10000000 ]; then
      for i in 0 1 2 3 4 5 6 7 8 9; do
        "$tmp/fdgen" "${common[@]}" --duration "$dur" --sender "p$i" --seed $((i + 1)) -o "$tmp/part.fdk"
        if [ "$i" -eq 0 ]; then cat "$tmp/part.fdk"; else tail -n +4 "$tmp/part.fdk"; fi >>"$tmp/t.fdk"
      done
    else
      "$tmp/fdgen" "${common[@]}" --duration "$dur" --senders 10 -o "$tmp/t.fdk"
    fi
  fi
  rm -f "$tmp/part.fdk"
  n=$(($(wc -l <"$tmp/t.fdk") - 3)) # header, comment and column lines
  for _ in $(seq "$repeat"); do
    run new "$n" "$tmp/fdreplay" "${args[@]}" --no-progress --out "$tmp/out" "$tmp/t.fdk"
    if [ -n "${OLD:-}" ]; then
      run old "$n" "$OLD" "${args[@]}" --no-progress --out "$tmp/out" "$tmp/t.fdk"
    fi
  done
  rm -f "$tmp/t.fdk"
done
