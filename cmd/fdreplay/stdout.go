package main

import "io"

// errWriter passes writes on to w until one fails, then keeps that error
// and writes nothing more. run gives one to the run as its stdout: the
// table, the headers and the messages are printed without checking each
// call, and run reports the error once the run ends (a full disk or a
// closed pipe on stdout must not end the run with exit 0 and nothing
// written). The CPU profile is written through one too, since
// runtime/pprof's profile writer drops write errors.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	e.err = err
	return n, err
}
