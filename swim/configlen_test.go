package swim

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Self's ID and address over 255 bytes are refused naming which and its
// length (usr27 F6: it said "Self.ID or Self.Addr longer than 255 bytes");
// 255 bytes are accepted.
func TestConfigNamesLongSelf(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	_, err := New(Config{Self: Node{ID: ID(strings.Repeat("a", 300)), Addr: "10.0.0.1:7946"}}, r)
	assert.EqualError(t, err, "swim: invalid config: Self.ID of 300 bytes, longer than 255 (MaxIDLen)")
	_, err = New(Config{Self: Node{ID: "a", Addr: strings.Repeat("b", 256)}}, r)
	assert.EqualError(t, err, "swim: invalid config: Self.Addr of 256 bytes, longer than 255 (MaxAddrLen)")
	_, err = New(Config{Self: Node{ID: ID(strings.Repeat("a", MaxIDLen)), Addr: strings.Repeat("b", MaxAddrLen)}}, r)
	assert.NoError(t, err)
}
