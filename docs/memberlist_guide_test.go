package docs

import (
	"go/ast"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// api is what a package declares: its exported top-level names, and the
// exported fields and methods of each of its types (embedded fields
// count under the embedded type's name).
type api struct {
	names   map[string]bool
	members map[string]map[string]bool // type -> field or method
}

func parseAPI(t *testing.T, dir string) api {
	t.Helper()
	a := api{names: map[string]bool{}, members: map[string]map[string]bool{}}
	add := func(typ, name string) {
		if a.members[typ] == nil {
			a.members[typ] = map[string]bool{}
		}
		a.members[typ][name] = true
	}
	embeds := map[string][]string{} // struct type -> the same package's types it embeds
	for _, file := range packageFiles(t, dir) {
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					a.names[d.Name.Name] = true
					continue
				}
				rt := d.Recv.List[0].Type
				if s, ok := rt.(*ast.StarExpr); ok {
					rt = s.X
				}
				if id, ok := rt.(*ast.Ident); ok {
					add(id.Name, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						a.names[s.Name.Name] = true
						st, ok := s.Type.(*ast.StructType)
						if !ok {
							continue
						}
						for _, f := range st.Fields.List {
							for _, n := range f.Names {
								add(s.Name.Name, n.Name)
							}
							if len(f.Names) == 0 {
								switch e := f.Type.(type) {
								case *ast.SelectorExpr:
									add(s.Name.Name, e.Sel.Name)
								case *ast.Ident: // an embedded group: its fields are promoted
									add(s.Name.Name, e.Name)
									embeds[s.Name.Name] = append(embeds[s.Name.Name], e.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							a.names[n.Name] = true
						}
					}
				}
			}
		}
	}
	promote(a, embeds)
	return a
}

// promote adds to each struct type the fields and methods of the types it
// embeds, at any depth, as Go's selector rules make them reachable.
func promote(a api, embeds map[string][]string) {
	var walk func(typ string, seen map[string]bool)
	walk = func(typ string, seen map[string]bool) {
		for _, e := range embeds[typ] {
			if seen[e] {
				continue
			}
			seen[e] = true
			walk(e, seen)
			for name := range a.members[e] {
				if a.members[typ] == nil {
					a.members[typ] = map[string]bool{}
				}
				a.members[typ][name] = true
			}
		}
	}
	for typ := range embeds {
		walk(typ, map[string]bool{typ: true})
	}
}

// TestMemberlistGuideNamesExist checks that every fdkit name the guide
// coming-from-memberlist.md gives (agent.X, swim.X, Agent.X, Config.X,
// Config.Protocol.X, Protocol.X, Stats.X, Stats.Protocol.X, Member.X, and
// the bare agent.Config fields of its configuration table) is declared, so
// that a rename breaks this test and not a reader's port.
func TestMemberlistGuideNamesExist(t *testing.T) {
	guide, err := os.ReadFile("coming-from-memberlist.md")
	require.NoError(t, err)
	ag, sw := parseAPI(t, "../swim/agent"), parseAPI(t, "../swim")
	has := func(ref string) bool {
		p := strings.Split(ref, ".")
		switch {
		case p[0] == "agent" && len(p) == 2:
			return ag.names[p[1]]
		case p[0] == "agent" && len(p) == 3:
			return ag.members[p[1]][p[2]]
		case p[0] == "swim" && len(p) == 2:
			return sw.names[p[1]]
		case p[0] == "Agent":
			return ag.members["Agent"][p[1]]
		case (p[0] == "Config" || p[0] == "Stats") && len(p) == 3 && p[1] == "Protocol":
			return sw.members[p[0]][p[2]]
		case p[0] == "Config" || p[0] == "Stats":
			return ag.members[p[0]][p[1]]
		case p[0] == "Protocol":
			return sw.members["Config"][p[1]]
		case p[0] == "Member":
			return ag.members["Member"][p[1]] || sw.members["PeerStatus"][p[1]]
		}
		return true // another package's name (transport, ...)
	}
	ref := regexp.MustCompile(`(?:^|[^.\w])((?:agent|swim|Agent|Config|Stats|Protocol|Member)(?:\.[A-Z]\w*)+)`)
	checked := 0
	for _, code := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(string(guide), -1) {
		for _, r := range ref.FindAllStringSubmatch(code[1], -1) {
			checked++
			assert.True(t, has(r[1]), "coming-from-memberlist.md names %s, which fdkit does not declare", r[1])
		}
	}
	// The configuration table: fdkit's column starts with agent.Config
	// fields named bare.
	_, table, ok := strings.Cut(string(guide), "| memberlist `Config` | fdkit |")
	require.True(t, ok, "no configuration table")
	table, _, _ = strings.Cut(table, "\n## ")
	bare := regexp.MustCompile("^`([A-Z]\\w*)`")
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		if m := bare.FindStringSubmatch(strings.TrimSpace(cells[2])); m != nil {
			checked++
			assert.True(t, ag.members["Config"][m[1]], "the configuration table names agent.Config.%s, which does not exist", m[1])
		}
	}
	assert.Greater(t, checked, 60, "the guide's names were not found: has its layout changed?")
}
