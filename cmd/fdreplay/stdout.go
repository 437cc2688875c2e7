package main

import "io"

// keptErrWriter passes writes on to w until one fails, then keeps that
// error and writes nothing more: the table, the headers and the messages
// are printed without checking each call, and run reports the error once
// the run ends (a full disk or a closed pipe on stdout must not end the
// run with exit 0 and nothing written).
type keptErrWriter struct {
	w   io.Writer
	err error
}

func (k *keptErrWriter) Write(p []byte) (int, error) {
	if k.err != nil {
		return 0, k.err
	}
	n, err := k.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	k.err = err
	return n, err
}
