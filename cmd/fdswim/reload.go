package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/fdkit/fdkit/swim/wire"
)

// SIGHUP's reloads of a running agent: the keys of --key-file, the
// metadata of --meta-file and the stage of --encryption-stage-file.

// readKeyFile reads the keys of a --key-file (wire.ReadKeyFile).
func readKeyFile(path string) ([][]byte, error) {
	keys, err := wire.ReadKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("--key-file %w", err)
	}
	return keys, nil
}

// hupReload is what SIGHUP reloads: the keys of --key-file, when it is
// the only source of keys, and the metadata of --meta-file.
type hupReload struct {
	keyring   *wire.Keyring
	keyFile   string // "": keys do not reload
	keysFixed bool   // --key-file given with --key: its keys do not reload
	metaFile  string // "": metadata does not reload
	// meta is the metadata last applied, wireVersion the format written
	// (1 carries no metadata); setMeta applies new metadata (Agent.SetMeta).
	meta        []byte
	wireVersion byte
	setMeta     func(context.Context, []byte) error
	// stageFile is the --encryption-stage-file ("": none), stage the
	// stage last applied, setStage applies a new one (setStage).
	stageFile string
	stage     encryptionStage
	setStage  func(encryptionStage) error
	out, diag *slog.Logger
}

// reloadOnHUP calls r.reload on every SIGHUP until ctx ends, and ignores
// SIGHUP from then until the returned stop is called (when the agent has
// finished its leave). With nothing to reload it says so and keeps
// running: SIGHUP's default action would kill the member without a leave,
// or in the middle of one, and the group would declare it dead.
func reloadOnHUP(ctx context.Context, r *hupReload) (stop func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-hup:
				if ctx.Err() == nil {
					r.reload(ctx)
				} else {
					r.diag.Warn("SIGHUP ignored: the agent is leaving")
				}
			}
		}
	}()
	// stop does not wait for a reload in progress: the process is about
	// to exit. A reload does not block on its files: the key, stage and
	// metadata files are opened without waiting for a named pipe's writer
	// and must be regular files.
	return func() {
		signal.Stop(hup)
		close(done)
	}
}

// reload re-reads the key file, the stage file and the metadata file, each
// on its own: a bad one (one that is not a regular file included) is logged
// at ERROR and changes nothing, and does not keep the others from
// reloading.
//
// Keys: the keyring is replaced with the file's keys; edit the file on
// every member to rotate (add the new key second, reload everywhere; move
// it first, reload; delete the old one, reload). Only a --key-file given
// alone reloads: with --key too, the keyring holds keys the file does not
// list, and replacing it with the file's would drop them.
//
// Encryption stage: the file's stage replaces the agent's (setStage); the
// same stage again changes nothing.
//
// Metadata: the file's metadata replaces this member's through
// Agent.SetMeta, which raises its incarnation and disseminates it (the
// others see an update event); the same metadata again changes nothing.
func (r *hupReload) reload(ctx context.Context) {
	if r.keyFile == "" && r.metaFile == "" && r.stageFile == "" {
		r.diag.Warn("SIGHUP ignored: keys reload only from --key-file alone, metadata only from --meta-file, the encryption stage only from --encryption-stage-file")
		return
	}
	switch {
	case r.keyFile != "":
		n, err := r.keyring.ReloadFile(r.keyFile)
		if err != nil {
			r.diag.Error("key reload failed; keys unchanged", "key_file", r.keyFile, "err", fmt.Errorf("--key-file %w", err))
		} else {
			r.out.Info("keys reloaded", "key_file", r.keyFile, "count", n)
		}
	case r.keysFixed:
		r.diag.Warn("keys not reloaded: they reload only from --key-file alone, not with --key")
	}
	if r.stageFile != "" {
		r.reloadStage()
	}
	if r.metaFile == "" {
		return
	}
	meta, err := readMetaFile(r.metaFile)
	if err == nil {
		err = metaFitsWire(r.metaFile, meta, r.wireVersion)
	}
	if err == nil {
		if err = r.setMeta(ctx, meta); err != nil {
			err = fmt.Errorf("--meta-file %s: %w", r.metaFile, err)
		}
	}
	if err != nil {
		r.diag.Error("metadata reload failed; metadata unchanged", "meta_file", r.metaFile, "err", err)
		return
	}
	changed := string(meta) != string(r.meta)
	r.meta = meta
	r.out.Info("metadata reloaded", "meta_file", r.metaFile, "bytes", len(meta), "changed", changed)
}

// metaFitsWire refuses metadata under wire format 1, which carries none.
func metaFitsWire(path string, meta []byte, wireVersion byte) error {
	if len(meta) > 0 && wireVersion < 2 {
		return fmt.Errorf("--meta-file %s: %d bytes of metadata: --wire-version 1 writes no metadata: want an empty file or wire format 2", path, len(meta))
	}
	return nil
}

// reloadStage reads the --encryption-stage-file and applies its stage; a
// bad file, or a stage the agent refuses, is logged at ERROR and changes
// nothing.
func (r *hupReload) reloadStage() {
	st, err := readStageFile(r.stageFile)
	if err == nil && st != r.stage {
		if err = r.setStage(st); err != nil {
			err = fmt.Errorf("--encryption-stage-file %s: %w", r.stageFile, err)
		}
	}
	if err != nil {
		r.diag.Error("encryption stage reload failed; stage unchanged", "stage_file", r.stageFile, "stage", r.stage.name, "err", err)
		return
	}
	changed := st != r.stage
	if risk := stageSkipped(r.stage, st); risk != "" {
		r.diag.Warn("encryption stage moved two steps at once", "stage_file", r.stageFile, "from", r.stage.name, "to", st.name, "risk", risk)
	}
	r.stage = st
	r.out.Info("encryption stage reloaded", "stage_file", r.stageFile, "stage", st.name, "changed", changed)
}

// stageSkipped says what a move from one stage to another two steps away
// risks (a member that missed a step, or a file edited twice between two
// SIGHUPs: right when every other member has moved already); "" for a
// move of one step or none.
func stageSkipped(from, to encryptionStage) string {
	i, j := slices.Index(encryptionStages, from), slices.Index(encryptionStages, to)
	switch {
	case i < 0 || j < 0 || i-j == 1 || j-i == 1 || i == j:
		return ""
	case j > i:
		return fmt.Sprintf("members still at %s send plain packets, which this member now refuses", from.name)
	default:
		return fmt.Sprintf("this member now sends plain packets, which members still at %s refuse", from.name)
	}
}
