package kvstore

import (
	"crypto/subtle"
	"fmt"
)

// The messages of a pull (pull.go), each its kind byte and fields of
// fixed length, nothing else:
//
//	kindAsk     the ask's nonce (askNonceLen bytes, drawn per ask)
//	kindChal    the nonces of the asks it answers (1 to maxChalAsks, for
//	            one member: chalsout.go), the challenge (challengeLen)
//	kindEcho    the challenge, the joiner's token for the pull (tokenLen)
//	kindAnswer  one answer byte (answerQueued, answerBusy, answerRecent),
//	            the echo's token
//
// A message of another length, or an answer byte of no answer, does not
// decode: the parse functions return an error naming the kind and the
// length wanted, and the receiver counts it in Rejected.

// askNonceLen is the length in bytes of the nonce a joiner draws for
// each ask, which the member's challenge carries back.
const askNonceLen = 16

// The lengths of the pull's messages, kind byte included; chalLen is a
// challenge's for one ask.
const (
	askLen    = 1 + askNonceLen
	chalLen   = 1 + askNonceLen + challengeLen
	echoLen   = 1 + challengeLen + tokenLen
	answerLen = 2 + tokenLen
)

// askMsg is a kindAsk with the ask's nonce.
func askMsg(nonce [askNonceLen]byte) []byte {
	return append([]byte{kindAsk}, nonce[:]...)
}

// parseAsk returns the nonce of the kindAsk data.
func parseAsk(data []byte) (nonce [askNonceLen]byte, err error) {
	if err := wantLen(data, kindAsk, "ask", askLen); err != nil {
		return nonce, err
	}
	return [askNonceLen]byte(data[1:]), nil
}

// chalMsg is a kindChal answering the asks with nonces asks.
func chalMsg(asks [][askNonceLen]byte, chal [challengeLen]byte) []byte {
	b := make([]byte, 0, 1+len(asks)*askNonceLen+challengeLen)
	b = append(b, kindChal)
	for _, a := range asks {
		b = append(b, a[:]...)
	}
	return append(b, chal[:]...)
}

// parseChal returns the ask nonces of the kindChal data, askNonceLen
// bytes each, and its challenge.
func parseChal(data []byte) (asks []byte, chal [challengeLen]byte, err error) {
	if len(data) == 0 || data[0] != kindChal {
		return nil, chal, fmt.Errorf("challenge: not kind %q", kindChal)
	}
	n := len(data) - 1 - challengeLen
	if n < askNonceLen || n%askNonceLen != 0 || n/askNonceLen > maxChalAsks {
		return nil, chal, fmt.Errorf("challenge of %d bytes with its kind, want 1 + %d·k + %d for k from 1 to %d asks",
			len(data), askNonceLen, challengeLen, maxChalAsks)
	}
	return data[1 : 1+n], [challengeLen]byte(data[1+n:]), nil
}

// answers reports whether nonce is one of asks (askNonceLen bytes
// each), comparing each in constant time.
func answers(asks []byte, nonce [askNonceLen]byte) bool {
	found := 0
	for i := 0; i+askNonceLen <= len(asks); i += askNonceLen {
		found |= subtle.ConstantTimeCompare(asks[i:i+askNonceLen], nonce[:])
	}
	return found == 1
}

// echoMsg is a kindEcho of chal with the joiner's token.
func echoMsg(chal [challengeLen]byte, token [tokenLen]byte) []byte {
	return append(append([]byte{kindEcho}, chal[:]...), token[:]...)
}

// parseEcho returns the challenge and the token of the kindEcho data.
func parseEcho(data []byte) (chal [challengeLen]byte, token [tokenLen]byte, err error) {
	if err := wantLen(data, kindEcho, "echo", echoLen); err != nil {
		return chal, token, err
	}
	return [challengeLen]byte(data[1:]), [tokenLen]byte(data[1+challengeLen:]), nil
}

// answerMsg is a kindAnswer of answer with the echo's token.
func answerMsg(answer byte, token [tokenLen]byte) []byte {
	return append([]byte{kindAnswer, answer}, token[:]...)
}

// parseAnswer returns the answer byte and the token of the kindAnswer
// data.
func parseAnswer(data []byte) (answer byte, token [tokenLen]byte, err error) {
	if err := wantLen(data, kindAnswer, "answer", answerLen); err != nil {
		return 0, token, err
	}
	switch data[1] {
	case answerQueued, answerBusy, answerRecent:
	default:
		return 0, token, fmt.Errorf("answer %q, want %q, %q or %q", data[1], answerQueued, answerBusy, answerRecent)
	}
	return data[1], [tokenLen]byte(data[2:]), nil
}

// wantLen checks that data is a message of kind, n bytes long.
func wantLen(data []byte, kind byte, name string, n int) error {
	if len(data) == 0 || data[0] != kind {
		return fmt.Errorf("%s: not kind %q", name, kind)
	}
	if len(data) != n {
		return fmt.Errorf("%s of %d bytes with its kind, want %d", name, len(data), n)
	}
	return nil
}
