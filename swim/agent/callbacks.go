package agent

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/fdkit/fdkit/detector"
	"github.com/fdkit/fdkit/swim"
)

// The application's callbacks (Config.LocalState, MergeRemoteState, and
// Protocol.MergeFilter, AliveFilter, ValidAddr, AckPayload, PingComplete,
// and the factories Protocol.PeerDetector and RTTEstimator) run on the
// agent's goroutine, which every other method of Agent waits
// for. A callback that called one of those would wait for itself: the
// agent would stop for good and Shutdown would never return. So the
// agent marks the time it spends in a callback, and a method called on
// its goroutine then does not wait: Members reads the view at once (the
// state machine is between two of its own steps or stopped inside one,
// at a callback, and nothing else changes it meanwhile), the methods
// that change the state or send return ErrInCallback, and Leave, Close
// and Shutdown start the stop and return ErrInCallback without waiting
// for it (it happens once the callback returns).

// ErrInCallback is returned, wrapped with the method's name, by an
// Agent's methods called from one of its own callbacks (Config.LocalState,
// Config.MergeRemoteState, and Protocol.MergeFilter, AliveFilter,
// ValidAddr, AckPayload, PingComplete, PeerDetector and RTTEstimator),
// which run on the agent's goroutine: by Join, SetMeta, Broadcast, SendTo, SendToAddress and
// SendReliable, which did nothing, and by Leave, Close and Shutdown, which
// started the stop but cannot wait for it (it completes after the
// callback returns; Done is closed then). Members, MembersContext, Self,
// Stats, LocalHealthMultiplier, Keyring, Done and Err work from a
// callback.
var ErrInCallback = errors.New("agent: called from one of this agent's callbacks, which run on the agent's goroutine")

// callbackState tells the agent's goroutine in a callback apart from the
// others: depth counts the callbacks running (only the agent's goroutine
// moves it), and goroutine is the agent goroutine's number, read once
// when it starts. Go gives a goroutine no handle of its own to compare,
// so the number is read from runtime.Stack's first line, and only while
// depth is above zero: a call outside a callback costs one atomic load.
type callbackState struct {
	depth     atomic.Int32
	goroutine atomic.Uint64
}

// inCallback reports whether the calling goroutine is the agent's, inside
// one of the application's callbacks.
func (a *Agent) inCallback() bool {
	return a.cb.depth.Load() > 0 && goroutineID() == a.cb.goroutine.Load()
}

// callbackErr is ErrInCallback for the method named.
func callbackErr(method string) error {
	return fmt.Errorf("%w: %s", ErrInCallback, method)
}

// goroutineID is the calling goroutine's number, from the first line of
// its stack trace ("goroutine 18 [running]:"); 0 if that line is not in
// this form.
func goroutineID() uint64 {
	var buf [32]byte
	b := buf[:runtime.Stack(buf[:], false)]
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uint64
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}

// enter and leave bracket a callback. Agent goroutine.
func (a *Agent) enter() { a.cb.depth.Add(1) }
func (a *Agent) leave() { a.cb.depth.Add(-1) }

// wrapCallbacks makes every application callback of pc mark its time on
// the agent's goroutine (callbackState).
func (a *Agent) wrapCallbacks(pc *swim.Config) {
	if f := pc.LocalState; f != nil {
		pc.LocalState = func(join bool) []byte {
			a.enter()
			defer a.leave()
			return f(join)
		}
	}
	if f := pc.MergeFilter; f != nil {
		pc.MergeFilter = func(from swim.Node, ups []swim.Update) error {
			a.enter()
			defer a.leave()
			return f(from, ups)
		}
	}
	if f := pc.AliveFilter; f != nil {
		pc.AliveFilter = func(u swim.Update) error {
			a.enter()
			defer a.leave()
			return f(u)
		}
	}
	if f := pc.ValidAddr; f != nil {
		pc.ValidAddr = func(addr string) error {
			a.enter()
			defer a.leave()
			return f(addr)
		}
	}
	if f := pc.AckPayload; f != nil {
		pc.AckPayload = func() []byte {
			a.enter()
			defer a.leave()
			return f()
		}
	}
	if f := pc.PingComplete; f != nil {
		pc.PingComplete = func(target swim.Node, rtt time.Duration, payload []byte) {
			a.enter()
			defer a.leave()
			f(target, rtt, payload)
		}
	}
	if f := pc.PeerDetector; f != nil {
		pc.PeerDetector = func() (detector.Detector, error) {
			a.enter()
			defer a.leave()
			return f()
		}
	}
	if f := pc.RTTEstimator; f != nil {
		pc.RTTEstimator = func() (swim.RTTEstimator, error) {
			a.enter()
			defer a.leave()
			return f()
		}
	}
}

// mergeRemoteState calls Config.MergeRemoteState, marked as a callback.
// Agent goroutine.
func (a *Agent) mergeRemoteState(s swim.RemoteState) {
	a.enter()
	defer a.leave()
	a.cfg.MergeRemoteState(s.From, s.State, s.Join)
}
