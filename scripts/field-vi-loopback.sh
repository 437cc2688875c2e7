#!/bin/sh
# Reruns the [Field-vi] experiment (ALGORITHMS.md §8) on loopback with fdbeat's
# user-space impairments: four scenarios of about a minute each (stable;
# 80 ms ± 60 ms normal delay and 15 % loss; three 600 ms sender pauses; pauses
# on the impaired path), five detectors (timeouts 300 ms, 1 s, 3 s; φ 8 and 12
# with a window of 100), crash detection at the end of each run.
#
# Writes traces/loopback-<scenario>.fdk.gz and prints the table of false
# suspicions per minute and detection times beside the published figures.
# Takes about 4.5 minutes. FDBEAT_EXPERIMENT_DURATION=20s shortens each run.
set -eu
cd "$(dirname "$0")/.."
exec go test -tags experiment -run '^TestFieldViExperiment$' -count 1 -v -timeout 20m ./cmd/fdbeat
