package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// LIP6 sender ids are unsigned integers: "007" and "7" are one number
// written two ways, which was read as two senders (user48's F33). The mix
// is refused, naming both lines; it could be one sender (then two streams
// of it) or two meant apart (then merging them would be wrong).
func TestLIP6SenderSpelledTwoWays(t *testing.T) {
	text := "7 0 1000 2000 14\n9 0 1000 2000 14\n7 1 2000 3000 14\n007 2 3000 4000 14\n"
	_, _, err := readString(t, text, ReaderConfig{Name: "r.txt"})
	require.Error(t, err)
	assert.EqualError(t, err, `r.txt:4: field sender: want one spelling of each sender id: LIP6 ids are unsigned integers, and "7" (line 1) is the same number written otherwise, got "007"`)

	// The other way round, and through the field-by-field path (a hops
	// field of 20 digits, which the fast path leaves to it).
	_, _, err = readString(t, "0042 0 1000 2000 18446744073709551615\n42 1 2000 3000 18446744073709551615\n", ReaderConfig{Name: "r.txt"})
	assert.EqualError(t, err, `r.txt:2: field sender: want one spelling of each sender id: LIP6 ids are unsigned integers, and "0042" (line 1) is the same number written otherwise, got "42"`)

	// --lenient skips the line with the other spelling, as any bad line.
	recs, r, err := readString(t, text, ReaderConfig{Name: "r.txt", Lenient: true})
	require.NoError(t, err)
	assert.Len(t, recs, 3)
	assert.Equal(t, 1, r.Skipped())

	// One spelling throughout, leading zeros or not, is read as written.
	recs, _, err = readString(t, "007 0 1000 2000 14\n0 0 1000 2000 14\n007 1 2000 3000 14\n00 1 2000 3000 14\n", ReaderConfig{Name: "r.txt"})
	assert.EqualError(t, err, `r.txt:4: field sender: want one spelling of each sender id: LIP6 ids are unsigned integers, and "0" (line 2) is the same number written otherwise, got "00"`)
	assert.Len(t, recs, 3)
	recs, _, err = readString(t, "007 0 1000 2000 14\n0 0 1000 2000 14\n007 1 2000 3000 14\n", ReaderConfig{Name: "r.txt"})
	require.NoError(t, err)
	assert.Equal(t, []string{"007", "0", "007"}, []string{recs[0].Sender, recs[1].Sender, recs[2].Sender})
}

// A sign is another spelling too (atk25's F8): "+7" after "7" was read as
// a sender of its own, which took one heartbeat of 7's (a stream of one
// record, skipped, and a loss in 7's). Refused like "007", naming both
// lines, either way round; "+7" throughout is read as written, like
// "007" (given the format: detection wants an unsigned integer first);
// "-7" is no unsigned integer, so an id of its own, as "x7" is.
func TestLIP6SenderWithSign(t *testing.T) {
	text := "7 0 1000 2000 14\n9 0 1000 2000 14\n+7 1 2000 3000 14\n"
	_, _, err := readString(t, text, ReaderConfig{Name: "r.txt"})
	assert.EqualError(t, err, `r.txt:3: field sender: want one spelling of each sender id: LIP6 ids are unsigned integers, and "7" (line 1) is the same number written otherwise, got "+7"`)
	_, _, err = readString(t, "+007 0 1000 2000 14\n7 1 2000 3000 14\n", ReaderConfig{Name: "r.txt", Format: FormatLIP6})
	assert.EqualError(t, err, `r.txt:2: field sender: want one spelling of each sender id: LIP6 ids are unsigned integers, and "+007" (line 1) is the same number written otherwise, got "7"`)

	recs, _, err := readString(t, "+7 0 1000 2000 14\n-7 0 1000 2000 14\n+7 1 2000 3000 14\n+ 0 1000 2000 14\n", ReaderConfig{Name: "r.txt", Format: FormatLIP6})
	require.NoError(t, err)
	assert.Equal(t, []string{"+7", "-7", "+7", "+"}, []string{recs[0].Sender, recs[1].Sender, recs[2].Sender, recs[3].Sender})
}
