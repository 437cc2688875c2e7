#!/bin/sh
# The soak of issue 26 (docs/experiments.md, “fdbeat recv soak on a busy
# host”): one fdbeat send at 100 ms to fdbeat recv with its default
# detectors on loopback, 10 minutes idle, then 10 minutes with four busy
# loops on the cores, then the sender killed with SIGKILL. Prints, per
# detector, the suspicions of the unimpaired sender in each stretch and how
# long after the kill the sender was suspected, and the host lateness recv
# measured. About 20 minutes.
#
# Environment: FDBEAT_SOAK_IDLE, FDBEAT_SOAK_LOAD (durations, default 10m),
# FDBEAT_SOAK_BUSY (busy loops, default 4), FDBEAT_SOAK_DIR (keeps the recv
# log, table and trace; default a temporary directory).
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/fdbeat-soak.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -tags experiment -o "$bin" ./cmd/fdbeat
cd cmd/fdbeat
"$bin" -test.run '^TestSoak$' -test.count 1 -test.v -test.timeout 60m
