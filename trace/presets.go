package trace

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Preset describes a named generator configuration.
type Preset struct {
	Name        string
	Description string
	Config      GenConfig
}

// presets are the named configurations. Each returns a fresh GenConfig.
var presets = map[string]func() Preset{
	"stable": func() Preset {
		return Preset{"stable", "Δ 100 ms, sender jitter 0.5 ms, delay 5 ms ± 2 ms (normal), no loss, 10 min",
			GenConfig{
				Interval: 100 * time.Millisecond,
				Duration: 10 * time.Minute,
				Jitter:   500 * time.Microsecond,
				Delay:    Delay{Dist: DelayNormal, Mean: 5 * time.Millisecond, SD: 2 * time.Millisecond},
			}}
	},
	"jitter": func() Preset {
		// [Field-vi] impaired network: netem delay 80 ms ± 60 ms normal, 15 % loss.
		return Preset{"jitter", "Δ 100 ms, delay 80 ms ± 60 ms (normal, truncated at 0), 15 % Bernoulli loss, 5 min",
			GenConfig{
				Interval: 100 * time.Millisecond,
				Duration: 5 * time.Minute,
				Jitter:   200 * time.Microsecond,
				Delay:    Delay{Dist: DelayNormal, Mean: 80 * time.Millisecond, SD: 60 * time.Millisecond},
				Loss:     Loss{Model: LossBernoulli, P: 0.15},
			}}
	},
	"gc-pause": func() Preset {
		// [Field-vi] pauses: SIGSTOP 600 ms then SIGCONT, three times.
		return Preset{"gc-pause", "stable network (delay 5 ms ± 2 ms), sender stopped 600 ms at 30 s, 60 s and 90 s, 2 min",
			GenConfig{
				Interval: 100 * time.Millisecond,
				Duration: 2 * time.Minute,
				Jitter:   500 * time.Microsecond,
				Delay:    Delay{Dist: DelayNormal, Mean: 5 * time.Millisecond, SD: 2 * time.Millisecond},
				Pauses: []Period{
					{At: 30 * time.Second, Length: 600 * time.Millisecond},
					{At: 60 * time.Second, Length: 600 * time.Millisecond},
					{At: 90 * time.Second, Length: 600 * time.Millisecond},
				},
			}}
	},
	"wan": func() Preset {
		// Shaped like JAIST→EPFL (Hayashibara et al. 2004, docs/algorithms.md,
		// “Published field measurements”): Δ 103.5 ms, inter-arrival s.d. ≈
		// 0.19 ms, one-way delay ≈ RTT/2 ≈ 141.7 ms, 0.4 % loss in bursts (814
		// bursts, about 28 heartbeats each on average), longest burst 1,093
		// heartbeats.
		return Preset{"wan", "JAIST-EPFL shape: Δ 103.5 ms, delay 141.5 ms + lognormal (0.15 ms ± 0.12 ms), 0.4 % Gilbert-Elliott loss in bursts of mean 27, a 1,100-heartbeat outage at 20 min, clocks offset 3 h with 1.5 ppm drift, 1 h",
			GenConfig{
				Interval:      103500 * time.Microsecond,
				Duration:      time.Hour,
				Jitter:        50 * time.Microsecond,
				Delay:         Delay{Dist: DelayLogNormal, Base: 141500 * time.Microsecond, Mean: 150 * time.Microsecond, SD: 120 * time.Microsecond},
				Loss:          GilbertElliott(0.004, 27),
				Outages:       []Period{{At: 20 * time.Minute, Length: 1100 * 103500 * time.Microsecond}},
				ReceiverStart: 3 * time.Hour,
				DriftPPM:      1.5,
			}}
	},
}

// Presets returns the names of the generator presets, sorted.
func Presets() []string { return slices.Sorted(maps.Keys(presets)) }

// LookupPreset returns the preset called name, or an error listing the
// known names.
func LookupPreset(name string) (Preset, error) {
	f, ok := presets[name]
	if !ok {
		return Preset{}, fmt.Errorf("trace: unknown preset %q (known: %s)", name, strings.Join(Presets(), ", "))
	}
	return f(), nil
}
