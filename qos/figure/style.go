package figure

import (
	"image/color"
	"strconv"

	"github.com/fdkit/fdkit/qos"
	"github.com/fdkit/fdkit/spec"
	"gonum.org/v1/plot/vg/draw"
)

// familyColours are twelve colours that stay apart on white and for the
// common colour-vision deficiencies (Tableau 10 with its light yellow and
// pink replaced by darker tones, plus black and teal-blue).
var familyColours = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, // blue
	{0xf2, 0x8e, 0x2b, 0xff}, // orange
	{0xe1, 0x57, 0x59, 0xff}, // red
	{0x59, 0xa1, 0x4f, 0xff}, // green
	{0xb0, 0x7a, 0xa1, 0xff}, // purple
	{0x9c, 0x75, 0x5f, 0xff}, // brown
	{0x00, 0x00, 0x00, 0xff}, // black
	{0x76, 0xb7, 0xb2, 0xff}, // teal
	{0xb8, 0x86, 0x0b, 0xff}, // dark yellow
	{0xd6, 0x3c, 0x9c, 0xff}, // magenta
	{0x7f, 0x7f, 0x7f, 0xff}, // grey
	{0x17, 0x6d, 0x8a, 0xff}, // dark cyan
}

// familyGlyphs are the markers, one per family with the colours, so that a
// family is told apart by shape too (in print and for colour-blind readers).
var familyGlyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.RingGlyph{},
	draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{},
}

// knownFamilies fixes the style of fdkit's own families, the registry of
// package spec in its order, so a family looks the same in every plot and
// report whatever is selected.
var knownFamilies = func() []string {
	var names []string
	for _, a := range spec.Algorithms() {
		names = append(names, a.Name)
	}
	return names
}()

// familyIndex returns the style slot of family name: its place among the
// known families, else the next free slot in order of first appearance in
// names.
func familyIndex(name string, names []string) int {
	for i, k := range knownFamilies {
		if k == name {
			return i
		}
	}
	i := len(knownFamilies)
	for _, n := range names {
		if n == name {
			return i
		}
		known := false
		for _, k := range knownFamilies {
			known = known || k == n
		}
		if !known {
			i++
		}
	}
	return i
}

// familyStyle returns the colour and marker of slot i.
func familyStyle(i int) (color.RGBA, draw.GlyphDrawer) {
	return familyColours[i%len(familyColours)], familyGlyphs[i%len(familyGlyphs)]
}

// Style returns the colour and marker of family among names (the families
// drawn together): fdkit's own families always get the same style, others
// the next free one in order of first appearance in names.
func Style(family string, names []string) (color.RGBA, draw.GlyphDrawer) {
	return familyStyle(familyIndex(family, names))
}

// ParamSymbol returns the symbol a plot or report shows for the swept
// parameter param of family (a family, preset, spec or sweep in the
// textual form of package spec): the Symbol of the registry's parameter
// (Φ for a φ threshold, θ for Satzger's, α, T, ...), else param itself.
func ParamSymbol(family, param string) string {
	s, err := spec.Parse(family)
	if err != nil {
		w, werr := spec.ParseSweep(family)
		if werr != nil {
			return param
		}
		s = w.Spec
	}
	for _, p := range s.Algorithm().Params() {
		if p.Name == param && p.Symbol != "" {
			return p.Symbol
		}
	}
	return param
}

// SettingLabel writes a parameter value as "Φ=8", "T=261ms".
func SettingLabel(c qos.Curve, v float64) string {
	if c.Param == "" {
		return ""
	}
	return ParamSymbol(c.Family, c.Param) + "=" + strconv.FormatFloat(v, 'g', 3, 64) + c.Unit
}
