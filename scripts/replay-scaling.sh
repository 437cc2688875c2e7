#!/usr/bin/env bash
# Scaling benchmark of fdreplay (docs/experiments.md, "fdreplay in bounded
# memory").
# Generates traces of N heartbeats (10 senders, Δ = 10 ms, lognormal delays,
# 1 % loss) with fdgen, replays each with --out and all default detectors,
# and prints wall time, records per second and peak RSS (GNU time).
#
#   scripts/replay-scaling.sh [N...]            # default: 1e5 1e6 1e7
#   OLD=/path/to/old/fdreplay scripts/replay-scaling.sh 1e6
#   ARGS='-d fixed,chen --points 4' scripts/replay-scaling.sh 1e6 1e8
#
# ARGS are passed to every fdreplay run (for example a smaller detector set,
# so that 10^8 finishes on a shared machine). Peak RSS is GNU time's %M of
# fdreplay alone.
#
# With OLD set, the old binary is replayed on the same trace right after the
# new one, for a side-by-side ratio. Traces are written to a temporary
# directory (never committed) and removed; above 1e7 as ten one-sender
# fdgen runs (seeds 1 to 10) concatenated, since fdgen holds a whole trace
# in memory (about 110 bytes a record).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/fdreplay" ./cmd/fdreplay
go build -o "$tmp/fdgen" ./cmd/fdgen
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1e5 1e6 1e7)
read -r -a args <<<"${ARGS:-}"
extra=""
[ ${#args[@]} -eq 0 ] || extra=$(printf '%q ' "${args[@]}")
printf '| binary | heartbeats | wall s | user s | records/s | peak RSS MB |\n|---|---|---|---|---|---|\n'
run() { # label n cmd...
  local label=$1 n=$2; shift 2
  rm -rf "$tmp/out"
  /usr/bin/time -f '%e %U %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
  read -r wall user kb <"$tmp/time"
  awk -v l="$label" -v n="$n" -v w="$wall" -v u="$user" -v kb="$kb" \
    'BEGIN { printf "| %s | %d | %.1f | %.1f | %.0f | %.0f |\n", l, n, w, u, n / w, kb / 1024 }'
}
for s in "${sizes[@]}"; do
  n=$(awk -v s="$s" 'BEGIN { printf "%d", s }')
  dur="$((n / 1000))s" # 10 senders × 100 heartbeats per second
  gen=("$tmp/fdgen" --interval 10ms --duration "$dur" --senders 10 --delay lognormal --delay-mean 2ms --delay-sd 1ms --loss 0.01 --compress none)
  if [ "$n" -gt 10000000 ]; then
    one=("$tmp/fdgen" --interval 10ms --duration "$((n / 1000))s" --delay lognormal --delay-mean 2ms --delay-sd 1ms --loss 0.01 --compress none)
    : >"$tmp/t.fdk"
    for i in 0 1 2 3 4 5 6 7 8 9; do
      "${one[@]}" --sender "p$i" --seed $((i + 1)) -o "$tmp/part.fdk"
      if [ "$i" -eq 0 ]; then cat "$tmp/part.fdk"; else tail -n +4 "$tmp/part.fdk"; fi >>"$tmp/t.fdk"
      rm -f "$tmp/part.fdk"
    done
  else
    "${gen[@]}" -o "$tmp/t.fdk"
  fi
  n=$(($(wc -l <"$tmp/t.fdk") - 3)) # header, comment and column lines
  run new "$n" "$tmp/fdreplay" "${args[@]}" --no-progress --out "$tmp/out" "$tmp/t.fdk"
  if [ -n "${OLD:-}" ]; then
    run old "$n" "$OLD" "${args[@]}" --no-progress --out "$tmp/out" "$tmp/t.fdk"
  fi
  rm -f "$tmp/t.fdk"
done
