package flagcheck_test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fdkit/fdkit/internal/flagcheck"
)

func Example() {
	fs := pflag.NewFlagSet("fdgen", pflag.ContinueOnError)
	fs.SetOutput(nopWriter{})
	var loss float64
	flagcheck.Var(fs, &loss, "loss", "", 0, 0, 1, "a fraction in [0, 1]", "loss rate")
	fmt.Println(fs.Parse([]string{"--loss", "NaN"}))
	fmt.Println(fs.Parse([]string{"--loss", "0.25"}), loss)
	// Output:
	// invalid argument "NaN" for "--loss" flag: not a finite number: want a fraction in [0, 1]
	// <nil> 0.25
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
