package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/fdkit/fdkit/internal/reloadfile"
	"github.com/fdkit/fdkit/swim/agent"
	"github.com/fdkit/fdkit/swim/wire"
)

// The cluster label and the stages of turning encryption on in a running
// group (agent.Config.Label, AcceptPlain and SendPlain;
// docs/coming-from-memberlist.md, “Turning encryption on in a running
// group”). With --accept-plain and --send-plain a member changes stage at
// a restart; with --encryption-stage-file, at a SIGHUP (Agent.SetSendPlain
// and SetAcceptPlain), so that turning encryption on takes one restart,
// the one that gives the member its key.

// envelopeFlags are the flags of the packets' envelope besides the keys.
type envelopeFlags struct {
	label                  string
	acceptPlain, sendPlain bool
	stageFile              string
}

// register adds --label, --accept-plain, --send-plain and
// --encryption-stage-file to fs.
func (e *envelopeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&e.label, "label", "", "cluster label, at most 255 bytes of printable UTF-8: every packet and TCP frame carries it, and packets with another label or none are dropped (fdswim_label_mismatches_total); every member of the group needs the same (memberlist's Label; empty: none)")
	fs.BoolVar(&e.acceptPlain, "accept-plain", false, "with --key or --key-file, also accept unencrypted packets: while encryption is turned on in a running group (stages: restart every member with --accept-plain --send-plain, then each with --accept-plain alone, then each without; memberlist's GossipVerifyIncoming=false; --encryption-stage-file saves the last two restarts)")
	fs.BoolVar(&e.sendPlain, "send-plain", false, "with --key or --key-file and --accept-plain, send unencrypted packets: the first stage of turning encryption on, so that members not yet given the key read this one (memberlist's GossipVerifyOutgoing=false)")
	fs.StringVar(&e.stageFile, "encryption-stage-file", "", "file naming the stage of turning encryption on, read at start and again on SIGHUP: send-plain (send plain, accept both: as --accept-plain --send-plain), accept-plain (seal, accept both: as --accept-plain) or sealed (seal, refuse plain); needs --key or --key-file; excludes --accept-plain and --send-plain")
}

// apply sets the label and the stage in cfg, whose keys are set (or
// Plain): the errors name the flags.
func (e *envelopeFlags) apply(cfg *agent.Config) error {
	switch {
	case len(e.label) > wire.MaxLabelLen:
		return fmt.Errorf("--label is %d bytes, at most %d", len(e.label), wire.MaxLabelLen)
	case !printable(e.label):
		return fmt.Errorf("--label %q: want printable UTF-8 text (letters, digits, punctuation, spaces), no control or format characters: it is shown in logs and errors", e.label)
	case e.stageFile != "" && (e.acceptPlain || e.sendPlain):
		return errors.New("--encryption-stage-file excludes --accept-plain and --send-plain: the file names the stage")
	case cfg.Plain && e.stageFile != "":
		return errors.New("--encryption-stage-file names a stage of turning encryption on: it needs --key or --key-file, not --plain")
	case cfg.Plain && (e.acceptPlain || e.sendPlain):
		return fmt.Errorf("--accept-plain and --send-plain are stages of turning encryption on: they need --key or --key-file, not --plain")
	case e.sendPlain && !e.acceptPlain:
		return fmt.Errorf("--send-plain needs --accept-plain: a member sending plain while refusing plain cannot read the members in the same stage")
	}
	cfg.Label, cfg.AcceptPlain, cfg.SendPlain = e.label, e.acceptPlain, e.sendPlain
	if e.stageFile != "" {
		st, err := readStageFile(e.stageFile)
		if err != nil {
			return err
		}
		cfg.AcceptPlain, cfg.SendPlain = st.acceptPlain, st.sendPlain
	}
	return nil
}

// printable reports whether s is valid UTF-8 of graphic characters
// (unicode.IsGraphic: letters, marks, numbers, punctuation, symbols and
// spaces): no control characters, and no format characters or line
// separators either (U+202E reverses the text a log line shows after it,
// U+200B hides, U+2028 breaks the line).
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsGraphic(r) {
			return false
		}
	}
	return true
}

// encryptionStage is a stage of turning encryption on.
type encryptionStage struct {
	name                   string
	acceptPlain, sendPlain bool
}

// encryptionStages are the stages an --encryption-stage-file names, in
// the order encryption is turned on.
var encryptionStages = []encryptionStage{
	{"send-plain", true, true},
	{"accept-plain", true, false},
	{"sealed", false, false},
}

// maxStageFile bounds what is read of an --encryption-stage-file.
const maxStageFile = 1 << 10

// readStageFile reads an --encryption-stage-file: a regular file (a
// symbolic link to one is followed) holding one stage name, with blank
// lines and # comments allowed around it.
func readStageFile(path string) (encryptionStage, error) {
	b, err := reloadfile.Read(path, maxStageFile)
	switch {
	case errors.As(err, new(*reloadfile.KindError)):
		return encryptionStage{}, fmt.Errorf("--encryption-stage-file %s: %w: want a file that SIGHUP can read again", path, err)
	case errors.As(err, new(*reloadfile.LimitError)):
		return encryptionStage{}, fmt.Errorf("--encryption-stage-file %s: %w: want one stage name", path, err)
	case err != nil:
		return encryptionStage{}, fmt.Errorf("--encryption-stage-file %s: %w", path, unwrapPath(err))
	}
	var words []string
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			words = append(words, line)
		}
	}
	names := make([]string, len(encryptionStages))
	for i, s := range encryptionStages {
		names[i] = s.name
		if len(words) == 1 && words[0] == s.name {
			return s, nil
		}
	}
	got := "nothing"
	switch {
	case len(words) == 1:
		got = quoteArg(words[0])
	case len(words) > 1:
		got = fmt.Sprintf("%d lines, the first %s", len(words), quoteArg(words[0]))
	}
	return encryptionStage{}, fmt.Errorf("--encryption-stage-file %s: want one line naming a stage (%s), got %s",
		path, strings.Join(names[:len(names)-1], ", ")+" or "+names[len(names)-1], got)
}

// setStage moves a running agent to st, one switch at a time in the order
// that never sends plain while refusing plain (agent.ErrPlainStage):
// toward encryption SendPlain goes off before AcceptPlain, away from it
// AcceptPlain comes on before SendPlain.
func setStage(a *agent.Agent, st encryptionStage) error {
	if st.acceptPlain {
		if err := a.SetAcceptPlain(true); err != nil {
			return err
		}
		return a.SetSendPlain(st.sendPlain)
	}
	if err := a.SetSendPlain(false); err != nil {
		return err
	}
	return a.SetAcceptPlain(false)
}
