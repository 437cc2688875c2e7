package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fdkit/fdkit/swim/agent"
)

// configFlags maps the agent.Config fields an agent.ConfigError names to
// the flags of `fdswim agent` that set them.
var configFlags = map[string]string{
	"Bind": "--bind", "StreamBind": "--stream-bind", "DisableStream": "--no-stream", "Advertise": "--advertise", "ID": "--id",
	"MaxPacketSize": "--max-packet-size",
}

// flagError is an error of agent.Start said in the flags' terms; it
// wraps the agent's error.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// startError says an error of agent.Start in the flags' terms: an
// *agent.ConfigError names the flag that set the field at fault, or the
// flag whose value the field took by default, and the flags that would
// fix it. Any other error is returned as it is.
func startError(err error) error {
	var ce *agent.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	flag, ok := configFlags[ce.Field]
	if !ok {
		return err
	}
	var b strings.Builder
	if ce.From != "" {
		from, ok := configFlags[ce.From]
		if !ok {
			return err
		}
		fmt.Fprintf(&b, "%s %s (the default of %s)", from, ce.QuotedValue(), flag)
	} else {
		fmt.Fprintf(&b, "%s %s", flag, ce.QuotedValue())
	}
	fmt.Fprintf(&b, ": %v", ce.Err)
	if ce.From != "" || len(ce.Or) > 0 {
		b.WriteString(": give " + flag)
		for _, o := range ce.Or {
			if of, ok := configFlags[o]; ok {
				b.WriteString(", or " + of)
			}
		}
	}
	return &flagError{msg: b.String(), err: err}
}

// Where a duration flag's value came from when the flag was not given
// (agentFlags.intervalFrom, timeoutFrom); "" for given.
const (
	fromPreset  = "preset"
	fromDefault = "default"
)

// probeTimeoutError is the error for a probe timeout over the probe
// interval: it says where each came from (given, --preset's, the flag's
// default) and which flag to give.
func (f *agentFlags) probeTimeoutError() error {
	what := func(name string, v time.Duration, from string) string {
		switch from {
		case fromPreset:
			return fmt.Sprintf("--preset %s's %s %v", f.presetName, strings.ReplaceAll(name, "-", " "), v)
		case fromDefault:
			return fmt.Sprintf("the default --%s %v", name, v)
		}
		return fmt.Sprintf("--%s %v", name, v)
	}
	msg := fmt.Sprintf("%s exceeds %s: a probe must end within its protocol period",
		what("probe-timeout", f.probeTimeout, f.timeoutFrom), what("probe-interval", f.probeInterval, f.intervalFrom))
	switch {
	case f.timeoutFrom != "":
		msg += fmt.Sprintf("; give --probe-timeout %v or less", f.probeInterval)
	case f.intervalFrom != "":
		msg += fmt.Sprintf("; give --probe-interval %v or more, or a shorter --probe-timeout", f.probeTimeout)
	}
	return errors.New(msg)
}
