package spec

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the reference of every family, parameter and
// preset as Markdown tables (docs/detectors.md is this output).
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	for _, f := range order {
		fmt.Fprintf(&b, "### %s\n\n%s.", f.Name, f.Doc)
		if len(f.Aliases) > 0 {
			fmt.Fprintf(&b, " Also written %s.", strings.Join(f.Aliases, ", "))
		}
		if f.Swept != "" {
			p := f.param(f.Swept)
			fmt.Fprintf(&b, " A sweep varies %s (%s) by default, in fdreplay over %s.", f.Swept, p.Symbol, f.DefaultRange())
		}
		b.WriteString("\n\n| parameter | default | unit | range | field | meaning | source |\n|---|---|---|---|---|---|---|\n")
		for _, p := range f.params {
			unit := p.Unit
			if p.Kind == Enum {
				unit = strings.Join(p.Choices, " \\| ")
			}
			if unit == "" {
				unit = "–"
			}
			rng := p.RangeText()
			if rng == "" {
				rng = "–"
			}
			name := p.Name
			if len(p.Aliases) > 0 {
				name += " (also " + strings.Join(p.Aliases, ", ") + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, p.Default, unit, rng, p.Field, p.Doc, p.Source)
		}
		b.WriteString("\n")
	}
	b.WriteString("### Presets\n\n| preset | spec | documented in |\n|---|---|---|\n")
	for _, p := range Presets() {
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", p.Name, p.Text, p.Source)
	}
	b.WriteString("\n### SWIM presets (fdswim agent --preset)\n\n| preset | documented in |\n|---|---|\n")
	for _, p := range SWIMPresets() {
		fmt.Fprintf(&b, "| %s | %s |\n", p.Name, p.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
