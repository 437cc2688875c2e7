//go:build !unix

package outfile

import (
	"os"
	"syscall"
)

// stopSignals are the signals HandleSignals stops the command on; outside
// Unix there is no SIGHUP to catch.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// signalNames names stopSignals as a shell user knows them.
var signalNames = map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM"}
