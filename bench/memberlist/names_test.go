package main

import (
	"strings"
	"testing"
)

// TestMemberName checks the names of -name-len: m00... at 3, the given
// length above it, distinct for distinct members, and lacking's report in
// the same names.
func TestMemberName(t *testing.T) {
	if got := (Params{}).memberName(7); got != "m07" {
		t.Fatalf("default name %q, want m07", got)
	}
	if got := (Params{NameLen: 3}).memberName(123); got != "m123" {
		t.Fatalf("name of member 123 %q, want m123", got)
	}
	for _, l := range []int{4, 15, 36, 64, 100, MaxNameLen} {
		p := Params{NameLen: l}
		seen := map[string]bool{}
		for i := 0; i < 70; i++ {
			name := p.memberName(i)
			if len(name) != l {
				t.Fatalf("-name-len %d: member %d named %q (%d bytes)", l, i, name, len(name))
			}
			if seen[name] {
				t.Fatalf("-name-len %d: %q given twice", l, name)
			}
			seen[name] = true
		}
		if l > 4 && !strings.HasPrefix(p.memberName(5), "m05-") {
			t.Fatalf("-name-len %d: %q does not start with m05-", l, p.memberName(5))
		}
	}
	p := Params{NameLen: 36}
	got := lacking([]string{p.memberName(0), p.memberName(2)}, 3, p)
	if len(got) != 1 || got[0] != p.memberName(1) {
		t.Fatalf("lacking %v, want [%s]", got, p.memberName(1))
	}
}

// TestHostNames: host-style names share their text, have the length
// asked for, and are distinct for the members of a 256-member group.
func TestHostNames(t *testing.T) {
	for _, l := range []int{14, 36, 64, 200} {
		p := Params{NameLen: l, NameStyle: "host"}
		seen := map[string]bool{}
		for i := 0; i < 256; i++ {
			name := p.memberName(i)
			if len(name) != l || seen[name] {
				t.Fatalf("-name-len %d: member %d named %q (%d bytes, seen %v)", l, i, name, len(name), seen[name])
			}
			seen[name] = true
		}
	}
	if got := (Params{NameLen: 36, NameStyle: "host"}).memberName(7); got != "ip-10-0-0-7.eu-west-1.compute.intern" {
		t.Fatalf("member 7: %q", got)
	}
}
