package spec

import (
	"sort"
	"time"

	"github.com/fdkit/fdkit/phi"
	"github.com/fdkit/fdkit/swim"
)

// Preset is a detector configured as a system runs it by default, where
// those defaults are publicly documented.
type Preset struct {
	Name   string
	Text   string // its textual form, every parameter spelt out
	Source string // where the defaults are documented
}

type preset struct {
	Preset
	s Spec
}

func (p *preset) spec() Spec { return p.s.clone() }

var presets = map[string]*preset{}

func addPreset(name, source string, cfg any) {
	s, err := FromConfig(cfg)
	if err != nil {
		panic(err)
	}
	presets[name] = &preset{Preset{Name: name, Text: s.String(), Source: source}, s}
}

// Presets returns the presets sorted by name.
func Presets() []Preset {
	var out []Preset
	for _, p := range presets {
		out = append(out, p.Preset)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func init() {
	// Presets are registered after the families (init order follows the
	// file names: families.go, then presets.go).
	addPreset("akka", "Akka reference.conf, akka.cluster.failure-detector: threshold = 8, max-sample-size = 1000, min-std-deviation = 100 ms, acceptable-heartbeat-pause = 3 s, heartbeat-interval = 1 s",
		phi.AkkaConfig{Threshold: 8, WindowSize: 1000, MinStdDev: new(100 * time.Millisecond),
			AcceptablePause: new(3 * time.Second), BootstrapInterval: new(time.Second)})
	addPreset("hazelcast", "Hazelcast's phi-accrual cluster failure detector (a port of Akka's): hazelcast.heartbeat.phiaccrual.failuredetector.threshold = 10, .sample.size = 200, .min.std.dev.millis = 100; acceptable pause hazelcast.max.no.heartbeat.seconds = 60, first estimate hazelcast.heartbeat.interval.seconds = 5",
		phi.AkkaConfig{Threshold: 10, WindowSize: 200, MinStdDev: new(100 * time.Millisecond),
			AcceptablePause: new(60 * time.Second), BootstrapInterval: new(5 * time.Second)})
	addPreset("cassandra", "Cassandra: phi_convict_threshold = 8 (cassandra.yaml); gms/FailureDetector.java: ArrivalWindow of 1000 intervals, fd_initial_value_ms = fd_max_interval_ms = 2 × the 1 s gossip interval",
		phi.CassandraConfig{Threshold: 8, WindowSize: 1000, BootstrapInterval: new(2 * time.Second), MaxInterval: new(2 * time.Second)})
	addPreset("scylla", "Scylla db/config.cc: phi_convict_threshold = 8, fd_initial_value_ms = 2000, fd_max_interval_ms = 2000 (the two are set independently)",
		phi.CassandraConfig{Threshold: 8, BootstrapInterval: new(2 * time.Second), MaxInterval: new(2 * time.Second)})
}

// SWIMPreset is a SWIM configuration named after a system.
type SWIMPreset struct {
	Name   string
	Source string
	Config swim.Config
}

// SWIMPresets returns the SWIM presets: memberlist's LAN and WAN probe and
// suspicion settings (memberlist config.go, DefaultLANConfig and
// DefaultWANConfig), in swim's Lifeguard mode (memberlist implements
// Lifeguard; its probes, not a per-peer detector, raise suspicions).
func SWIMPresets() []SWIMPreset {
	lan := swim.Config{Mode: swim.ModeLifeguard, ProbeInterval: time.Second, ProbeTimeout: 500 * time.Millisecond,
		IndirectChecks: new(3), RetransmitMult: 4, PushPullInterval: new(30 * time.Second),
		Lifeguard: swim.Lifeguard{SuspicionMult: 4, SuspicionMaxTimeoutMult: 6, MaxLocalHealthMultiplier: 8}}
	wan := lan
	wan.ProbeInterval, wan.ProbeTimeout, wan.SuspicionMult, wan.PushPullInterval = 5*time.Second, 3*time.Second, 6, new(60*time.Second)
	const src = "hashicorp/memberlist config.go: "
	return []SWIMPreset{
		{"memberlist-lan", src + "DefaultLANConfig (ProbeInterval 1s, ProbeTimeout 500ms, IndirectChecks 3, RetransmitMult 4, SuspicionMult 4, SuspicionMaxTimeoutMult 6, AwarenessMaxMultiplier 8, PushPullInterval 30s)", lan},
		{"memberlist-wan", src + "DefaultWANConfig (ProbeInterval 5s, ProbeTimeout 3s, SuspicionMult 6, PushPullInterval 60s; the rest as LAN)", wan},
	}
}
