// Package traces embeds small heartbeat traces that fdkit made itself with
// cmd/fdgen (synthetic, from trace package presets; see README.md in this
// directory for the exact commands), so that a fresh clone has something
// real-shaped to replay: fdreplay with no argument replays Default.
//
// Files are in fdkit's trace format (package trace), gzip- or
// xz-compressed:
//
//	stable.fdkit.gz    10 min, Δ 100 ms, delay 5 ms ± 2 ms, no loss
//	jitter.fdkit.gz    5 min, Δ 100 ms, delay 80 ms ± 60 ms, 15 % loss (Default)
//	gc-pause.fdkit.gz  2 min, stable network, three 600 ms sender pauses
//	wan.fdkit.xz       1 h, JAIST-EPFL shape, Δ 103.5 ms, loss bursts incl. one of 1,100
package traces

import (
	"embed"
	"io/fs"

	"github.com/fdkit/fdkit/trace"
)

//go:embed *.fdkit.gz *.fdkit.xz
var files embed.FS

// FS holds the traces as files at its root.
var FS fs.FS = files

// Default is the trace fdreplay replays when given none: the impaired
// network of [Field-vi] (delay 80 ms ± 60 ms, 15 % loss), 5 minutes, where
// detectors differ the most.
const Default = "jitter.fdkit.gz"

// Names returns the names of the embedded traces, sorted.
func Names() []string {
	ents, _ := fs.ReadDir(files, ".")
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// Open returns a trace.Reader for the embedded trace name. Errors name the
// file as "traces/<name>". Closing the Reader is optional (the data is in
// memory) but harmless.
func Open(name string) (*trace.Reader, error) {
	f, err := files.Open(name)
	if err != nil {
		return nil, err
	}
	return trace.NewReader(f, trace.ReaderConfig{Name: "traces/" + name})
}

// ReadAll reads every record of the embedded trace name.
func ReadAll(name string) ([]trace.Record, trace.Header, error) {
	r, err := Open(name)
	if err != nil {
		return nil, trace.Header{}, err
	}
	recs, err := r.ReadAll()
	return recs, r.Header(), err
}
