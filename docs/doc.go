// Package docs holds fdkit's reference documents and the tests that keep
// them true; it has no API.
//
//   - algorithms.md: every detector, QoS metric and SWIM rule, with its
//     formula, its source (paper and section or equation), a worked example
//     and the points where fdkit differs from the papers. Code cites it by
//     section title: docs/algorithms.md, “Chen's NFD-E”.
//   - experiments.md: every measured result the documentation quotes, with
//     the command that reproduces it.
//   - detectors.md: every detector family of package spec with its
//     parameters, defaults, units and sources.
//   - fdreplay.md and live.md: the command-line and live-use guides.
//   - api-conventions.md: the word Config, zero and defaults, and the one
//     name and type of each knob the detector configurations share
//     (TestAPIConventions checks the table against the code).
//   - coming-from-memberlist.md: hashicorp/memberlist's calls, delegates
//     and settings mapped onto swim/agent (TestMemberlistGuideNamesExist
//     checks that every fdkit name it gives exists).
//
// TestWorkedExamples recomputes, with fdkit's public API, every worked
// example of algorithms.md that is marked <!-- check: NAME --> (package
// internal/worked reads them; the SWIM ones are checked in package swim), and
// TestCitedSectionsExist fails when a Go file or Markdown page cites a
// section title that neither document has.
package docs
