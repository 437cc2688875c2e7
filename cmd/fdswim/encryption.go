package main

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/wire"
)

// The cluster label and the stages of turning encryption on in a running
// group (agent.Config.Label, AcceptPlain and SendPlain;
// docs/coming-from-memberlist.md, “Turning encryption on in a running
// group”). fdswim changes stage at a restart: stop a member, start it
// again with the next stage's flags, one member at a time.

// envelopeFlags are the flags of the packets' envelope besides the keys.
type envelopeFlags struct {
	label                  string
	acceptPlain, sendPlain bool
}

// register adds --label, --accept-plain and --send-plain to fs.
func (e *envelopeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&e.label, "label", "", "cluster label, at most 255 bytes of printable UTF-8: every packet and TCP frame carries it, and packets with another label or none are dropped (fdswim_label_mismatches_total); every member of the group needs the same (memberlist's Label; empty: none)")
	fs.BoolVar(&e.acceptPlain, "accept-plain", false, "with --key or --key-file, also accept unencrypted packets: while encryption is turned on in a running group (stages: restart every member with --accept-plain --send-plain, then each with --accept-plain alone, then each without; memberlist's GossipVerifyIncoming=false)")
	fs.BoolVar(&e.sendPlain, "send-plain", false, "with --key or --key-file and --accept-plain, send unencrypted packets: the first stage of turning encryption on, so that members not yet given the key read this one (memberlist's GossipVerifyOutgoing=false)")
}

// apply sets the label and the stage in cfg, whose keys are set (or
// Plain): the errors name the flags.
func (e *envelopeFlags) apply(cfg *agent.Config) error {
	switch {
	case len(e.label) > wire.MaxLabelLen:
		return fmt.Errorf("--label is %d bytes, at most %d", len(e.label), wire.MaxLabelLen)
	case !printable(e.label):
		return fmt.Errorf("--label %q: want printable UTF-8 text (letters, digits, punctuation, spaces), no control characters: it is shown in logs and errors", e.label)
	case cfg.Plain && (e.acceptPlain || e.sendPlain):
		return fmt.Errorf("--accept-plain and --send-plain are stages of turning encryption on: they need --key or --key-file, not --plain")
	case e.sendPlain && !e.acceptPlain:
		return fmt.Errorf("--send-plain needs --accept-plain: a member sending plain while refusing plain cannot read the members in the same stage")
	}
	cfg.Label, cfg.AcceptPlain, cfg.SendPlain = e.label, e.acceptPlain, e.sendPlain
	return nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
