package detector

// OrDefault returns *p when p is not nil and def otherwise.
//
// It is how every fdkit configuration reads a field whose zero is a setting
// of its own (see “Configuration: zero and defaults” in the package
// documentation): nil means the documented default, and any value, zero
// included, is said with new(v), for example
//
//	phi.AkkaConfig{AcceptablePause: new(time.Duration(0))}
func OrDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
