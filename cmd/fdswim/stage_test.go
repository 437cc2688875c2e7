package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fdkit/fdkit/swim/wire"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readStageFile takes one stage name, with blank lines and # comments
// around it, and refuses anything else naming the file and the stages.
func TestReadStageFile(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "stage")
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		return p
	}
	for text, want := range map[string]encryptionStage{
		"send-plain\n":                           {"send-plain", true, true},
		"# stage 2\n\n  accept-plain  \n":        {"accept-plain", true, false},
		"sealed":                                 {"sealed", false, false},
		"# turning encryption on\nsealed\n# end": {"sealed", false, false},
	} {
		got, err := readStageFile(write(text))
		require.NoError(t, err, "%q", text)
		assert.Equal(t, want, got, "%q", text)
	}
	for text, want := range map[string]string{
		"":                     "got nothing",
		"# only a comment\n":   "got nothing",
		"plain\n":              `got "plain"`,
		"sealed\nsend-plain\n": `got 2 lines, the first "sealed"`,
		"Sealed\n":             `got "Sealed"`,
	} {
		p := write(text)
		_, err := readStageFile(p)
		assert.EqualError(t, err, "--encryption-stage-file "+p+": want one line naming a stage (send-plain, accept-plain or sealed), "+want, "%q", text)
	}
	_, err := readStageFile(filepath.Join(dir, "missing"))
	assert.EqualError(t, err, "--encryption-stage-file "+filepath.Join(dir, "missing")+": open: no such file or directory")
	_, err = readStageFile(dir)
	assert.EqualError(t, err, "--encryption-stage-file "+dir+": a directory, not a regular file: want a file that SIGHUP can read again")
	p := write(strings.Repeat("#\n", 600))
	_, err = readStageFile(p)
	assert.EqualError(t, err, "--encryption-stage-file "+p+": larger than 1024 bytes: want one stage name")
}

// --encryption-stage-file refuses --plain and the stage flags, and a bad
// file stops the agent before it starts, naming the flag.
func TestStageFileFlagErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	require.NoError(t, os.WriteFile(good, []byte("send-plain\n"), 0o600))
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("on\n"), 0o600))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--plain", "--encryption-stage-file", good}, "--encryption-stage-file names a stage of turning encryption on: it needs --key or --key-file, not --plain"},
		{[]string{"--key", testKeyHex, "--encryption-stage-file", good, "--accept-plain"}, "--encryption-stage-file excludes --accept-plain and --send-plain"},
		{[]string{"--key", testKeyHex, "--encryption-stage-file", bad}, "--encryption-stage-file " + bad + `: want one line naming a stage (send-plain, accept-plain or sealed), got "on"`},
	} {
		var out, errb strings.Builder
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := runAgent(ctx, append([]string{"--bind", "127.0.0.1:0"}, c.args...), &out, &errb)
		cancel()
		if assert.Error(t, err, "%v", c.args) {
			assert.Contains(t, err.Error(), c.want, "%v", c.args)
		}
	}
}

// A reload applies the file's stage through setStage once it changes; a
// bad file is logged and the stage stays.
func TestHUPReloadStage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stage")
	require.NoError(t, os.WriteFile(p, []byte("accept-plain\n"), 0o600))
	var out, diag bytes.Buffer
	var applied []string
	r := &hupReload{stageFile: p, stage: encryptionStages[0],
		setStage: func(st encryptionStage) error { applied = append(applied, st.name); return nil },
		out:      slog.New(slog.NewTextHandler(&out, nil)), diag: slog.New(slog.NewTextHandler(&diag, nil))}
	r.reload(context.Background())
	r.reload(context.Background())
	assert.Equal(t, []string{"accept-plain"}, applied, "the same stage again changes nothing")
	assert.Contains(t, out.String(), `msg="encryption stage reloaded" stage_file=`+p+` stage=accept-plain changed=true`)
	assert.Contains(t, out.String(), `stage=accept-plain changed=false`)
	require.NoError(t, os.WriteFile(p, []byte("sealed, please\n"), 0o600))
	r.reload(context.Background())
	assert.Equal(t, []string{"accept-plain"}, applied)
	assert.Contains(t, diag.String(), `level=ERROR msg="encryption stage reload failed; stage unchanged"`)
	assert.Equal(t, "accept-plain", r.stage.name)
}

// Turning encryption on in a running group with one restart: a plain
// member a and b, restarted with the key and a stage file at send-plain,
// form a group; a restarted likewise (as a2) joins it. Then the file says
// accept-plain, then sealed, each applied by SIGHUP: afterwards a member
// with the key alone (which refuses plain packets) joins both, and b
// refuses a plain member's packets (fdswim_auth_failures_total).
func TestEncryptionTurnedOnBySIGHUP(t *testing.T) {
	dir := t.TempDir()
	stage := func(name string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("send-plain\n"), 0o600))
		return p
	}
	fa, fb := stage("a"), stage("b")
	a := startAgent(t, "a", "127.0.0.1:0", "--plain")
	b := startAgent(t, "b", "127.0.0.1:0", "--key", testKeyHex, "--encryption-stage-file", fb, "--join", a.addr)
	alive := func(n int) func(map[string]viewEntry) bool {
		return func(v map[string]viewEntry) bool {
			k := 0
			for _, e := range v {
				if e.State == "alive" {
					k++
				}
			}
			return k == n
		}
	}
	waitAll(t, []*proc{a, b}, convergeMax, "plain a and b at send-plain", alive(2))
	a.signal(syscall.SIGTERM)
	<-a.exited
	a2 := startAgent(t, "a2", "127.0.0.1:0", "--key", testKeyHex, "--encryption-stage-file", fa, "--join", b.addr)
	waitAll(t, []*proc{a2, b}, convergeMax, "a2 and b at send-plain", alive(2))
	for _, st := range []string{"accept-plain", "sealed"} {
		for _, p := range []*proc{a2, b} {
			f := fa
			if p == b {
				f = fb
			}
			require.NoError(t, os.WriteFile(f, []byte(st+"\n"), 0o600))
			p.signal(syscall.SIGHUP)
			require.Eventually(t, func() bool {
				return strings.Contains(p.output(), `msg="encryption stage reloaded" stage_file=`+f+` stage=`+st+` changed=true`)
			}, 10*time.Second, 20*time.Millisecond, "%s: %s", p.id, p.output())
		}
	}
	c := startAgent(t, "c", "127.0.0.1:0", "--key", testKeyHex, "--join", b.addr)
	waitAll(t, []*proc{a2, b, c}, convergeMax, "a member refusing plain joins the sealed group", alive(3))
	before := b.metric(t, "fdswim_auth_failures_total")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, fdswimBinary(t), "agent", "--id", "d", "--bind", "127.0.0.1:0", "--plain",
		"--join", b.addr, "--join-timeout", "1s", "--probe-interval", period, "--probe-timeout", probeTO).CombinedOutput()
	require.Error(t, err, "a plain member joined the sealed group: %s", out)
	assert.Greater(t, b.metric(t, "fdswim_auth_failures_total"), before, "b refused the plain member's packets")
}

// A reload that moves two steps at once (a member that missed a step, or
// the file edited twice between SIGHUPs) applies the stage and warns,
// naming what each direction risks; a move of one step does not warn.
func TestHUPReloadStageSkipWarns(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stage")
	var out, diag bytes.Buffer
	var applied []string
	r := &hupReload{stageFile: p, stage: encryptionStages[0],
		setStage: func(st encryptionStage) error { applied = append(applied, st.name); return nil },
		out:      slog.New(slog.NewTextHandler(&out, nil)), diag: slog.New(slog.NewTextHandler(&diag, nil))}
	move := func(to string) string {
		diag.Reset()
		require.NoError(t, os.WriteFile(p, []byte(to+"\n"), 0o600))
		r.reload(context.Background())
		return diag.String()
	}
	assert.Contains(t, move("sealed"), `level=WARN msg="encryption stage moved two steps at once" stage_file=`+p+
		` from=send-plain to=sealed risk="members still at send-plain send plain packets, which this member now refuses"`)
	assert.Contains(t, move("send-plain"), `from=sealed to=send-plain risk="this member now sends plain packets, which members still at sealed refuse"`)
	assert.Empty(t, move("accept-plain"))
	assert.Empty(t, move("sealed"))
	assert.Empty(t, move("sealed"))
	assert.Equal(t, []string{"sealed", "send-plain", "accept-plain", "sealed"}, applied)
}

// A --key-file replaced by a named pipe is refused at once on SIGHUP, the
// keys stay, and the stage in the same reload, and in later ones, is
// still applied: the pipe's open used to block the reload goroutine for
// good, silently (user37 F7).
func TestHUPReloadKeyFileFIFO(t *testing.T) {
	dir := t.TempDir()
	keys, stage := filepath.Join(dir, "keys"), filepath.Join(dir, "stage")
	mkfifo(t, keys)
	require.NoError(t, os.WriteFile(stage, []byte("accept-plain\n"), 0o600))
	key, err := wire.ParseKey(testKeyHex)
	require.NoError(t, err)
	kr, err := wire.NewKeyring(key)
	require.NoError(t, err)
	// out, diag and applied are read only once the reload has returned.
	var out, diag bytes.Buffer
	var applied []string
	r := &hupReload{keyring: kr, keyFile: keys, stageFile: stage, stage: encryptionStages[0],
		setStage: func(st encryptionStage) error { applied = append(applied, st.name); return nil },
		out:      slog.New(slog.NewTextHandler(&out, nil)), diag: slog.New(slog.NewTextHandler(&diag, nil))}
	done := make(chan struct{})
	go func() { r.reload(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		// Unblock the open so the goroutine ends.
		if w, err := os.OpenFile(keys, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("the reload blocked on a --key-file that is a named pipe; logged:\n%s%s", out.String(), diag.String())
	}
	assert.Contains(t, diag.String(), `level=ERROR msg="key reload failed; keys unchanged" key_file=`+keys+` err="--key-file `+keys+`: a named pipe, not a regular file: want a file of keys that a reload can read again"`)
	assert.Contains(t, out.String(), `msg="encryption stage reloaded" stage_file=`+stage+` stage=accept-plain changed=true`)
	assert.Equal(t, [][]byte{key}, kr.Keys(), "the keys stay")
	assert.Equal(t, []string{"accept-plain"}, applied)
}
