#!/bin/sh
# Reruns the [Field-vi] experiment (ALGORITHMS.md §8) on loopback with fdbeat's
# user-space impairments: four scenarios of about a minute each (stable;
# 80 ms ± 60 ms normal delay and 15 % loss; three 600 ms sender pauses; pauses
# on the impaired path), five detectors (timeouts 300 ms, 1 s, 3 s; φ 8 and 12
# with a window of 100), crash detection at the end of each run.
#
# Writes traces/loopback-<scenario>.fdk.gz and prints the table of false
# suspicions per minute and detection times beside the published figures,
# with the sender stalls (host scheduling) and load average of each run.
# Takes about 4.5 minutes.
#
# Environment: FDBEAT_EXPERIMENT_DURATION=20s shortens each run;
# FDBEAT_NICE=-10 runs the experiment at that nice level (negative needs root)
# so that a loaded host starves the sender less.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
bin=$(mktemp -d)/fdbeat-experiment.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -tags experiment -o "$bin" ./cmd/fdbeat
cd cmd/fdbeat
export FDBEAT_TRACES_DIR="${FDBEAT_TRACES_DIR:-$root/traces}"
if [ -n "${FDBEAT_NICE:-}" ]; then
	nice -n "$FDBEAT_NICE" "$bin" -test.run '^TestFieldViExperiment$' -test.count 1 -test.v -test.timeout 20m
else
	"$bin" -test.run '^TestFieldViExperiment$' -test.count 1 -test.v -test.timeout 20m
fi
