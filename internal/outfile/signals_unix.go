//go:build unix

package outfile

import (
	"os"
	"syscall"
)

// stopSignals are the signals HandleSignals stops the command on. SIGHUP
// comes when the terminal closes or an ssh session drops; its default
// action would end the process without removing the staging directory.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalNames names stopSignals as a shell user knows them.
var signalNames = map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}
