package worked

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	doc := "text\n<!-- check: a -->\n\n| x | y |\n|---|--:|\n| 1 | 2.50 |\n| 3 | −4 |\n\nmore\n| not | checked |\n"
	tabs, err := Parse(strings.NewReader(doc))
	require.NoError(t, err)
	require.Len(t, tabs, 1)
	a := tabs["a"]
	assert.Equal(t, 2, a.Line)
	assert.Equal(t, []string{"x", "y"}, a.Header)
	assert.Equal(t, [][]string{{"1", "2.50"}, {"3", "−4"}}, a.Rows)
	c, err := a.Cell(1, "y")
	require.NoError(t, err)
	assert.Equal(t, "−4", c)
	_, err = a.Cell(0, "z")
	assert.ErrorContains(t, err, `no column "z"`)
}

func TestParseErrors(t *testing.T) {
	for doc, want := range map[string]string{
		"<!-- check: a -->\ntext\n":                       "line 1: check \"a\" is not followed by a table",
		"<!-- check: a -->\n":                             "line 1: check \"a\" has no table",
		"<!-- check: a -->\n| x |\n|-|\n| 1 | 2 |\n":      "line 4: check \"a\": 2 cells, header has 1",
		"<!-- check: a -->\n| x |\n\n<!-- check: a -->\n": "line 4: check \"a\" already used on line 1",
	} {
		_, err := Parse(strings.NewReader(doc))
		assert.EqualError(t, err, want, doc)
	}
}

func TestNumber(t *testing.T) {
	for s, want := range map[string][2]float64{
		"725.833333": {725.833333, 5e-7},
		"−5.65":      {-5.65, 5e-3},
		"930 ms":     {930, 0.5},
		"1.926e-6":   {1.926e-6, 5e-10},
		"99.5 %":     {99.5, 0.05},
	} {
		v, tol, err := Number(s)
		require.NoError(t, err, s)
		assert.InDelta(t, want[0], v, 1e-15, s)
		assert.InDelta(t, want[1], tol, 1e-15, s)
	}
	for _, s := range []string{"", "–", "NaN", "Inf", "1e", "abc"} {
		_, _, err := Number(s)
		assert.Error(t, err, s)
	}
}

func TestCompare(t *testing.T) {
	assert.NoError(t, Compare("725.833333", 725.8333333333))
	assert.NoError(t, Compare("0.5", 0.54999))
	assert.Error(t, Compare("0.5", 0.5500001))
	assert.Error(t, Compare("725.833333", 725.833334))
}
