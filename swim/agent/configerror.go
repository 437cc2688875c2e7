package agent

import (
	"fmt"
	"strconv"
	"strings"
)

// ConfigError is the error of Start for a Config field whose value, as
// given or as it defaulted, cannot work: the UDP socket's or the stream
// listener's address (Bind, StreamBind) that cannot be bound, an
// advertised address (Advertise) that names no host, an ID the wire
// format refuses, a MaxPacketSize too small for the protocol. Start's other checks name their fields in their
// messages. A program that fills Config from other names (a command's
// flags) finds the field with errors.As and can say the same in its own
// terms.
type ConfigError struct {
	// Field is the field at fault as Config spells it: "Bind",
	// "StreamBind", "Advertise", "ID" or "MaxPacketSize".
	Field string
	// Value is the value that failed. When Field was left empty and took
	// its default, Value is that of the field named by From, as given
	// there (a Bind of 0.0.0.0:7946 is shown so, not as the socket's
	// [::]:7946).
	Value string
	// From names the field Field's default came from: "Bind" (the
	// default of StreamBind and Advertise; Bind's own default is
	// 127.0.0.1:0), "Transport" (the socket given there) or "Advertise"
	// (the default of ID); "" when Value was given to Field itself.
	From string
	// Err says why Value cannot work.
	Err error
	// Or names the fields, other than Field, whose setting would do
	// instead ("DisableStream" for StreamBind).
	Or []string
}

// Error names the field and the value: "agent: StreamBind (by default
// Bind 127.0.0.1:7946): stream listener: ...: set StreamBind, or
// DisableStream". A value with spaces or unprintable bytes is quoted, one
// over 40 bytes cut, its length given.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("agent: " + e.Field)
	if e.From != "" {
		fmt.Fprintf(&b, " (by default %s %s)", e.From, quoteValue(e.Value))
	} else {
		b.WriteString(" " + quoteValue(e.Value))
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.From != "" || len(e.Or) > 0 {
		b.WriteString(": set " + e.Field)
		for _, o := range e.Or {
			b.WriteString(", or " + o)
		}
	}
	return b.String()
}

// Unwrap returns Err.
func (e *ConfigError) Unwrap() error { return e.Err }

// QuotedValue is Value as Error shows it: as given when it is up to 40
// printable bytes without spaces, else quoted, cut after 32 bytes with
// its length when it is over 40 (a command that names its own flags
// shows the value the same way).
func (e *ConfigError) QuotedValue() string { return quoteValue(e.Value) }

// quoteValue is v as it is when it is up to 40 printable bytes without
// spaces, else quoted, cut after 32 bytes with its length when it is over
// 40.
func quoteValue(v string) string {
	switch q := strconv.Quote(v); {
	case len(v) > 40:
		return fmt.Sprintf("%q… (%d bytes)", v[:32], len(v))
	case q != `"`+v+`"` || v == "" || strings.ContainsRune(v, ' '):
		return q
	default:
		return v
	}
}
