package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fdkit/fdkit/swim"
	"github.com/fdkit/fdkit/swim/agent"
)

func TestParseMetaFile(t *testing.T) {
	good := "# this member\n\n  zone = eu 1  \r\nrole=db\n   # indented comment\nempty=\nx=a=b\n"
	b, err := parseMetaFile("m", []byte(good))
	require.NoError(t, err)
	assert.Equal(t, "empty=&role=db&x=a%3Db&zone=eu+1", string(b), "sorted URL query pairs, spaces around keys and values dropped")
	flags, err := parseMeta([]string{"zone=eu 1", "role=db", "empty=", "x=a=b"})
	require.NoError(t, err)
	assert.Equal(t, flags, b, "the same encoding as --meta")

	for _, empty := range []string{"", "\n\n", "# nothing yet\n", "  \r\n"} {
		b, err := parseMetaFile("m", []byte(empty))
		require.NoError(t, err, "%q", empty)
		assert.Nil(t, b, "%q is no metadata", empty)
	}

	for in, want := range map[string]string{
		"zone=eu\n# c\nnovalue\n": `--meta-file m line 3: "novalue": want key=value (or a blank line, or a # comment)`,
		"=v":                      `--meta-file m line 1: "=v": want a key before '='`,
		"  = v":                   `--meta-file m line 1: "= v": want a key before '='`,
		"a=1\n\nb=2\n a =3":       `--meta-file m line 4: key "a" given twice (first on line 1): want each key once`,
	} {
		_, err := parseMetaFile("m", []byte(in))
		assert.EqualError(t, err, want, "%q", in)
	}

	// 512 bytes once encoded: "k=" and 510 v's; one more byte on the
	// third line passes the limit there.
	b, err = parseMetaFile("m", []byte("k="+strings.Repeat("v", 510)))
	require.NoError(t, err)
	assert.Len(t, b, 512)
	_, err = parseMetaFile("m", []byte("# big\nk="+strings.Repeat("v", 500)+"\nj=12345678\n"))
	assert.EqualError(t, err, "--meta-file m line 3: metadata reaches 513 bytes once encoded here: want at most 512 in all")
	// Escaping counts: 171 spaces and '%' signs encode to 3 bytes each.
	_, err = parseMetaFile("m", []byte("k="+strings.Repeat("%", 170)))
	assert.NoError(t, err, "2 + 510 bytes")
	_, err = parseMetaFile("m", []byte("k="+strings.Repeat("%", 171)))
	assert.EqualError(t, err, "--meta-file m line 1: metadata reaches 515 bytes once encoded here: want at most 512 in all")
	// A hostile line is quoted clipped.
	_, err = parseMetaFile("m", []byte(strings.Repeat("x", 1000)))
	assert.EqualError(t, err, `--meta-file m line 1: "`+strings.Repeat("x", 64)+`…": want key=value (or a blank line, or a # comment)`)
}

func TestReadMetaFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "meta")
	require.NoError(t, os.WriteFile(p, []byte("zone=eu-1\n"), 0o600))
	b, err := readMetaFile(p)
	require.NoError(t, err)
	assert.Equal(t, "zone=eu-1", string(b))

	_, err = readMetaFile(filepath.Join(dir, "missing"))
	assert.EqualError(t, err, "--meta-file "+filepath.Join(dir, "missing")+": open: no such file or directory")
	_, err = readMetaFile(dir)
	assert.EqualError(t, err, "--meta-file "+dir+": a directory, not a regular file: want a file that SIGHUP can read again (--meta gives fixed metadata)")
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, bytes.Repeat([]byte("# comment\n"), 7000), 0o600))
	_, err = readMetaFile(big)
	assert.EqualError(t, err, "--meta-file "+big+": larger than 65536 bytes: want key=value lines encoding to at most 512 bytes")
}

// A bad --meta-file, or --meta-file with --meta, stops the agent before it
// binds anything, with exit status 2 and a message naming file and line.
func TestAgentMetaFileStartErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	require.NoError(t, os.WriteFile(good, []byte("zone=eu-1\n"), 0o600))
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("zone=eu-1\nrole db\n"), 0o600))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte("k="+strings.Repeat("v", 600)+"\n"), 0o600))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--meta", "a=b", "--meta-file", good}, "fdswim agent: --meta and --meta-file both give this member's metadata: give one of them\n"},
		{[]string{"--meta-file", bad}, `fdswim agent: --meta-file ` + bad + ` line 2: "role db": want key=value (or a blank line, or a # comment)` + "\n"},
		{[]string{"--meta-file", big}, "fdswim agent: --meta-file " + big + " line 1: metadata reaches 602 bytes once encoded here: want at most 512 in all\n"},
		{[]string{"--meta-file", filepath.Join(dir, "none")}, "fdswim agent: --meta-file " + filepath.Join(dir, "none") + ": open: no such file or directory\n"},
		{[]string{"--meta-file", good, "--wire-version", "1"}, "fdswim agent: --meta-file " + good + ": 9 bytes of metadata: --wire-version 1 writes no metadata: want an empty file or wire format 2\n"},
	} {
		var out, errb strings.Builder
		code := run(context.Background(), append([]string{"agent", "--plain", "--bind", "127.0.0.1:0"}, c.args...), &out, &errb)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Equal(t, c.want, errb.String(), "%v", c.args)
		assert.Empty(t, out.String(), "%v: nothing started", c.args)
	}
}

// reload applies a good file through setMeta, keeps the metadata on a bad
// one (setMeta not called), and refuses metadata under wire format 1.
func TestHUPReloadMeta(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta")
	var out, diag bytes.Buffer
	var applied [][]byte
	setErr := error(nil)
	r := &hupReload{metaFile: path, meta: []byte("zone=a"), wireVersion: 2,
		setMeta: func(_ context.Context, b []byte) error {
			if setErr != nil {
				return setErr
			}
			applied = append(applied, b)
			return nil
		},
		out: slog.New(slog.NewTextHandler(&out, nil)), diag: slog.New(slog.NewTextHandler(&diag, nil))}
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o600)) }

	write("zone=b\nrole=db\n")
	r.reload(context.Background())
	require.Equal(t, [][]byte{[]byte("role=db&zone=b")}, applied)
	assert.Contains(t, out.String(), `level=INFO msg="metadata reloaded" meta_file=`+path+` bytes=14 changed=true`)
	assert.Empty(t, diag.String())

	for i, c := range []struct{ content, want string }{
		{"zone=c\nrole\n", `line 2: \"role\": want key=value`},
		{"k=" + strings.Repeat("v", 511), "line 1: metadata reaches 513 bytes once encoded here: want at most 512 in all"},
	} {
		write(c.content)
		r.reload(context.Background())
		assert.Len(t, applied, 1, "case %d: nothing applied", i)
		assert.Equal(t, "role=db&zone=b", string(r.meta), "case %d", i)
		assert.Contains(t, diag.String(), `level=ERROR msg="metadata reload failed; metadata unchanged" meta_file=`+path)
		assert.Contains(t, diag.String(), "--meta-file "+path+" "+c.want)
	}
	require.NoError(t, os.Remove(path))
	diag.Reset()
	r.reload(context.Background())
	assert.Contains(t, diag.String(), "no such file or directory")
	assert.Len(t, applied, 1)

	// The library refusing it (the agent stopped, say) is logged too.
	write("zone=d\n")
	setErr = agent.ErrStopped
	diag.Reset()
	r.reload(context.Background())
	assert.Contains(t, diag.String(), "--meta-file "+path+": "+agent.ErrStopped.Error())
	assert.Equal(t, "role=db&zone=b", string(r.meta))

	// Wire format 1: metadata refused, an empty file accepted.
	setErr = nil
	r.wireVersion = 1
	diag.Reset()
	r.reload(context.Background())
	assert.Contains(t, diag.String(), "--wire-version 1 writes no metadata")
	assert.Len(t, applied, 1)
	write("# none\n")
	out.Reset()
	r.reload(context.Background())
	require.Len(t, applied, 2)
	assert.Nil(t, applied[1])
	assert.Contains(t, out.String(), `msg="metadata reloaded" meta_file=`+path+` bytes=0 changed=true`)
	out.Reset()
	r.reload(context.Background())
	assert.Contains(t, out.String(), `bytes=0 changed=false`)
}

// With --key-file alongside --key, SIGHUP reloads the metadata and says
// the keys were not reloaded.
func TestHUPReloadKeysFixed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta")
	require.NoError(t, os.WriteFile(path, []byte("zone=b\n"), 0o600))
	var out, diag bytes.Buffer
	called := false
	r := &hupReload{keysFixed: true, metaFile: path, wireVersion: 2,
		setMeta: func(context.Context, []byte) error { called = true; return nil },
		out:     slog.New(slog.NewTextHandler(&out, nil)), diag: slog.New(slog.NewTextHandler(&diag, nil))}
	r.reload(context.Background())
	assert.True(t, called)
	assert.Contains(t, diag.String(), `level=WARN msg="keys not reloaded: they reload only from --key-file alone, not with --key"`)
	assert.Contains(t, out.String(), `msg="metadata reloaded"`)
}

// metaEntry is a member of /members with its metadata.
type metaEntry struct {
	ID   string `json:"id"`
	Meta string `json:"meta"`
	Inc  uint64 `json:"incarnation"`
	Self bool   `json:"self"`
}

func (p *proc) metaOf(id string) (metaEntry, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + p.http + "/members")
	if err != nil {
		return metaEntry{}, err
	}
	defer resp.Body.Close()
	var es []metaEntry
	if err := json.NewDecoder(resp.Body).Decode(&es); err != nil {
		return metaEntry{}, err
	}
	for _, e := range es {
		if e.ID == id {
			return e, nil
		}
	}
	return metaEntry{}, fmt.Errorf("%s not in %s's view", id, p.id)
}

// TestMetaFileReloadBySIGHUP: agent a runs with --key-file and --meta-file;
// one SIGHUP reloads both, and b sees a's new metadata (a higher
// incarnation, an update event). A bad file on the next SIGHUP is logged
// and a keeps the metadata it had, in its own view and in b's.
func TestMetaFileReloadBySIGHUP(t *testing.T) {
	dir := t.TempDir()
	keys, meta := filepath.Join(dir, "keys"), filepath.Join(dir, "meta")
	require.NoError(t, os.WriteFile(keys, []byte(testKeyHex+"\n"), 0o600))
	require.NoError(t, os.WriteFile(meta, []byte("# first\nzone=eu-1\n"), 0o600))
	a := startAgent(t, "a", "127.0.0.1:0", "--key-file", keys, "--meta-file", meta)
	b := startAgent(t, "b", "127.0.0.1:0", "--key", testKeyHex, "--join", a.addr)
	var before metaEntry
	require.Eventually(t, func() bool {
		e, err := b.metaOf("a")
		before = e
		return err == nil && e.Meta == "zone=eu-1"
	}, convergeMax, 50*time.Millisecond, "%s", b.output())

	require.NoError(t, os.WriteFile(keys, []byte(testKeyHex+"\n"+testKeyHex[:32]+"\n"), 0o600))
	require.NoError(t, os.WriteFile(meta, []byte("zone=eu-2\nrole=db\n"), 0o600))
	a.signal(syscall.SIGHUP)
	require.Eventually(t, func() bool {
		o := a.output()
		return strings.Contains(o, `msg="keys reloaded" key_file=`+keys+` count=2`) &&
			strings.Contains(o, `msg="metadata reloaded" meta_file=`+meta+` bytes=17 changed=true`)
	}, 5*time.Second, 20*time.Millisecond, "%s", a.output())
	// A loaded host can get a suspected for a moment, or stall a's ticks
	// past its pause guard: each refutation and each local pause raises
	// its incarnation by one, which the checks below allow for.
	bumps := func() uint64 {
		return uint64(a.metric(t, "fdswim_protocol_refutations_total") + a.metric(t, "fdswim_protocol_local_pauses_total"))
	}
	bumped := bumps()
	var after metaEntry
	require.Eventually(t, func() bool {
		e, err := b.metaOf("a")
		after = e
		return err == nil && e.Meta == "role=db&zone=eu-2"
	}, convergeMax, 50*time.Millisecond, "%s", b.output())
	assert.Greater(t, after.Inc, before.Inc, "disseminated with an incarnation bump")
	require.Eventually(t, func() bool {
		return strings.Contains(b.output(), `kind=update id=a`) && strings.Contains(b.output(), `meta="role=db&zone=eu-2"`)
	}, 5*time.Second, 20*time.Millisecond, "%s", b.output())

	require.NoError(t, os.WriteFile(meta, []byte("zone=eu-3\nrole: db\n"), 0o600))
	a.signal(syscall.SIGHUP)
	require.Eventually(t, func() bool {
		return strings.Contains(a.output(), `level=ERROR msg="metadata reload failed; metadata unchanged" meta_file=`+meta)
	}, 5*time.Second, 20*time.Millisecond, "%s", a.output())
	assert.Contains(t, a.output(), `line 2: \"role: db\": want key=value`)
	self, err := a.metaOf("a")
	require.NoError(t, err)
	assert.Equal(t, metaEntry{ID: "a", Meta: "role=db&zone=eu-2", Inc: self.Inc, Self: true}, self, "a keeps its metadata")
	assert.GreaterOrEqual(t, self.Inc, after.Inc)
	assert.LessOrEqual(t, self.Inc, after.Inc+bumps()-bumped,
		"a's incarnation rose only to refute suspicions or after its own pauses, not for the file refused")
	// The keys reloaded again meanwhile; b still sees a as it was.
	time.Sleep(300 * time.Millisecond)
	e, err := b.metaOf("a")
	require.NoError(t, err)
	assert.Equal(t, "role=db&zone=eu-2", e.Meta)
	assert.LessOrEqual(t, e.Inc, after.Inc+bumps()-bumped)
	assert.Equal(t, 1, strings.Count(a.output(), "metadata reloaded"), "%s", a.output())
}

// FuzzMetaFile: parseMetaFile never panics; what it accepts is at most
// swim.MaxMetaLen bytes of sorted URL query pairs, one value per key, that
// read back (as a file of key=value lines) to the same bytes; what it
// refuses is named by file and line.
func FuzzMetaFile(f *testing.F) {
	for _, s := range []string{
		"", "zone=eu-1\n", "# c\n\n a = b \r\nc=d=e\n", "novalue", "=v", "a=1\na=2",
		"k=" + strings.Repeat("v", 510), "k=" + strings.Repeat("%", 171), "\x00=\xff\n#=\n", "a&b=c+d%20",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := parseMetaFile("m", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--meta-file m line ") {
				t.Fatalf("error without a line: %v", err)
			}
			if b != nil {
				t.Fatal("bytes with an error")
			}
			return
		}
		if len(b) > swim.MaxMetaLen {
			t.Fatalf("%d bytes", len(b))
		}
		if b == nil {
			return
		}
		v, err := url.ParseQuery(string(b))
		if err != nil {
			t.Fatalf("%q does not parse back: %v", b, err)
		}
		if v.Encode() != string(b) {
			t.Fatalf("%q is not sorted query form", b)
		}
		keys := make([]string, 0, len(v))
		for k, vals := range v {
			if len(vals) != 1 || k == "" {
				t.Fatalf("key %q: %q", k, vals)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var file strings.Builder
		// A comment first: a key that starts with U+FEFF would be taken
		// for a byte order mark on the first line.
		file.WriteString("# read back\n")
		for _, k := range keys {
			file.WriteString(k + "=" + v.Get(k) + "\n")
		}
		again, err := parseMetaFile("m", []byte(file.String()))
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%q read back as %q, %v", b, again, err)
		}
	})
}

// A --meta-file that is not a regular file is refused at once, naming
// what it is: a named pipe without a writer would block the open (at
// start: forever, before the agent binds; on SIGHUP: the reload goroutine,
// so no later SIGHUP reloads keys or metadata), and a pipe read once gives
// nothing the second time, which SIGHUP would apply as "no metadata"
// (--meta-file <(cmd) is /dev/fd/N, a pipe). /dev/zero is a device.
func TestReadMetaFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	mkfifo(t, fifo)
	done := make(chan error, 1)
	go func() { _, err := readMetaFile(fifo); done <- err }()
	select {
	case err := <-done:
		assert.EqualError(t, err, "--meta-file "+fifo+": a named pipe, not a regular file: want a file that SIGHUP can read again (--meta gives fixed metadata)")
	case <-time.After(5 * time.Second):
		// Unblock the open so the goroutine ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("readMetaFile blocked on a named pipe without a writer")
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, err := readMetaFile("/dev/zero")
		assert.EqualError(t, err, "--meta-file /dev/zero: a device, not a regular file: want a file that SIGHUP can read again (--meta gives fixed metadata)")
	}
	// A symbolic link to a regular file is read through.
	real := filepath.Join(dir, "real")
	require.NoError(t, os.WriteFile(real, []byte("zone=eu-1\n"), 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	b, err := readMetaFile(link)
	require.NoError(t, err)
	assert.Equal(t, "zone=eu-1", string(b))
}

// A SIGHUP while the agent leaves (after SIGTERM, for --leave-timeout)
// neither kills it nor reloads anything: it finishes its leave and exits
// 0: a reload loop that stopped handling SIGHUP when the leave began would
// leave SIGHUP's default action to kill the member mid-leave (status 129).
func TestSIGHUPDuringLeaveIgnored(t *testing.T) {
	meta := filepath.Join(t.TempDir(), "meta")
	require.NoError(t, os.WriteFile(meta, []byte("zone=eu-1\n"), 0o600))
	a := startAgent(t, "a", "127.0.0.1:0", "--plain", "--meta-file", meta, "--leave-timeout", "2s")
	b := startAgent(t, "b", "127.0.0.1:0", "--plain", "--join", a.addr)
	require.Eventually(t, func() bool { _, err := b.metaOf("a"); return err == nil }, convergeMax, 50*time.Millisecond, "%s", b.output())
	a.signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	a.signal(syscall.SIGHUP)
	select {
	case <-a.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("no exit after the leave:\n%s", a.output())
	}
	assert.Equal(t, 0, a.cmd.ProcessState.ExitCode(), "%v\n%s", a.cmd.ProcessState, a.output())
	assert.Contains(t, a.output(), "msg=stopped")
	assert.NotContains(t, a.output(), "metadata reloaded")
}

// A file that starts with a UTF-8 byte order mark (as some Windows editors
// save text, often with CRLF line ends) gives the same metadata as
// without: the mark is not part of the first key, which would otherwise
// come out as "\ufeffzone" (%EF%BB%BFzone once encoded), silently.
func TestParseMetaFileBOM(t *testing.T) {
	b, err := parseMetaFile("m", []byte("\ufeffzone=eu-1\r\nrole=db\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "role=db&zone=eu-1", string(b))
	b, err = parseMetaFile("m", []byte("\ufeff# comment\r\nzone=eu-1\r\n"))
	require.NoError(t, err)
	assert.Equal(t, "zone=eu-1", string(b), "a comment on the first line stays a comment")
	// Only at the start of the file: elsewhere it is part of the key.
	b, err = parseMetaFile("m", []byte("a=1\n\ufeffzone=eu-1\n"))
	require.NoError(t, err)
	assert.Equal(t, "a=1&%EF%BB%BFzone=eu-1", string(b))
}
