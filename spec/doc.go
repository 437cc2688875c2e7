// Package spec is the one textual form of an fdkit failure detector with
// all its parameters, for example
//
//	phi-akka(threshold=10, pause=3s, min-std=100ms, window=1000)
//
// It sits above the algorithm packages (which do not import it): commands
// and code facing qos use it to parse, print, build and sweep detectors, and
// to load them from a YAML file. docs/detectors.md lists every family and
// parameter with its default, unit and source.
//
// # Registry
//
// families.go holds one Row per detector algorithm (Algorithms, Lookup):
// its name and aliases, its parameters with their unit, range, default and
// source, its swept parameter with its symbol and default range, its
// constructor, how the swept parameter is swept (a qos family), and its
// configuration for a replayed stream (Algorithm.ForStream). fdreplay,
// fdbeat, the YAML config and docs/detectors.md all read it; a parameter
// has one name everywhere, the one of the textual form.
//
// # Grammar
//
//	spec   = name [ "(" [ param { "," param } ] ")" ]
//	param  = key "=" value
//	sweep  = spec key "=" lo ".." hi [ ":log" | ":lin" ]
//
// name is a family (phi-akka, chen, ...) or a preset named after a system
// whose defaults are publicly documented (akka, cassandra, scylla,
// hazelcast); a preset's parameters can be overridden: akka(threshold=10).
// Durations are Go durations (3s, 250ms, 1m30s, 0); counts are integers;
// real numbers are decimal; booleans are true or false. Spaces around
// tokens are ignored; names of families, presets and parameters ignore case
// (AKKA(Threshold=10) is akka(threshold=10)), and a parameter may be given
// once. Window sizes are at most detector.MaxWindowSize. A parameter not
// given takes its family's default.
//
// # Zero
//
// A value of 0 always means zero, never "the default": min-std=0 turns the
// σ floor off, pause=0 is no pause, min-samples=0 turns warm-up off. This
// follows the rule of package detector (“Configuration: zero and
// defaults”): fields whose zero is a setting of their own are pointers, and
// a parameter that is 0 is written into them as new(0). A parameter whose
// zero is not a valid setting (window=0) is an error naming it.
//
// # Round trip
//
// Printing a configuration gives its spec (Format, Spec.String): the family
// name and every parameter that differs from “not set”, in the family's
// order. Parsing that text gives the configuration back. Because the zero
// value of a plain field means its default, a plain parameter given as its
// zero (max-interval=0 for phi-normal, meaning no cap, the default) prints
// as not set.
package spec
