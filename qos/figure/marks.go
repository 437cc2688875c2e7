package figure

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// marks draws a glyph at each of pts (a scatter that draws nothing for an
// empty set, where gonum's scatter refuses one).
type marks struct {
	pts   Points
	style draw.GlyphStyle
}

// Plot implements plot.Plotter.
func (m marks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, pt := range m.pts {
		c.DrawGlyph(m.style, vg.Point{X: trX(pt.X), Y: trY(pt.Y)})
	}
}

// edgeMark is a point off the scale: (x, y) its place on the border, dx and
// dy the side it lies beyond (−1, 0 or +1 on each axis).
type edgeMark struct {
	x, y   float64
	dx, dy int
}

// edges draws each mark as an open triangle on the border pointing to the
// side where its point lies.
type edges struct {
	marks []edgeMark
	style draw.GlyphStyle
}

// Plot implements plot.Plotter.
func (e edges) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for _, m := range e.marks {
		sty := e.style
		sty.Shape = edgeGlyph{dx: m.dx, dy: m.dy}
		c.DrawGlyphNoClip(sty, vg.Point{X: trX(m.x), Y: trY(m.y)})
	}
}

// edgeGlyph is an open triangle pointing towards (dx, dy).
type edgeGlyph struct{ dx, dy int }

// DrawGlyph implements draw.GlyphDrawer.
func (g edgeGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	dir := vg.Point{X: vg.Length(g.dx), Y: vg.Length(g.dy)}
	if g.dx != 0 && g.dy != 0 {
		dir = dir.Scale(0.7071)
	}
	perp := vg.Point{X: -dir.Y, Y: dir.X}
	tip := pt.Add(dir.Scale(r))
	back := pt.Sub(dir.Scale(r))
	var path vg.Path
	path.Move(tip)
	path.Line(back.Add(perp.Scale(r)))
	path.Line(back.Sub(perp.Scale(r)))
	path.Close()
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	c.Stroke(path)
}

// boundGlyph marks an upper bound: a bar at the bound with an arrow below
// it pointing down, "at most here".
type boundGlyph struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (boundGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1)})
	var bar vg.Path
	bar.Move(vg.Point{X: pt.X - r, Y: pt.Y})
	bar.Line(vg.Point{X: pt.X + r, Y: pt.Y})
	bar.Move(pt)
	bar.Line(vg.Point{X: pt.X, Y: pt.Y - 2*r})
	c.Stroke(bar)
	var head vg.Path
	head.Move(vg.Point{X: pt.X, Y: pt.Y - 2.6*r})
	head.Line(vg.Point{X: pt.X - 0.6*r, Y: pt.Y - 1.6*r})
	head.Line(vg.Point{X: pt.X + 0.6*r, Y: pt.Y - 1.6*r})
	head.Close()
	c.Fill(head)
}

// glyphThumb is a legend thumbnail of one glyph.
type glyphThumb struct{ style draw.GlyphStyle }

// Thumbnail implements plot.Thumbnailer.
func (g glyphThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyphNoClip(g.style, c.Center())
}
