//go:build deps

// Package deps pins, during development, the libraries fdkit's packages import,
// so that go.sum holds every checksum they need. It is never built.
package deps

import (
	_ "github.com/olekukonko/tablewriter"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_golang/prometheus/testutil"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/pflag"
	_ "github.com/stretchr/testify/assert"
	_ "github.com/stretchr/testify/require"
	_ "github.com/ulikunitz/xz"
	_ "golang.org/x/term"
	_ "gonum.org/v1/gonum/floats"
	_ "gonum.org/v1/gonum/mathext"
	_ "gonum.org/v1/gonum/stat"
	_ "gonum.org/v1/gonum/stat/distuv"
	_ "gonum.org/v1/plot"
	_ "gonum.org/v1/plot/plotter"
	_ "gonum.org/v1/plot/plotutil"
	_ "gonum.org/v1/plot/vg"
	_ "gonum.org/v1/plot/vg/draw"
)
