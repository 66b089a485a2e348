package main

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// The palette, the same in every figure.
const (
	colWrite  = "#1565c0" // the write: a blue line with a triangle on top
	colStamp  = "#212121" // the stored timestamp: a dark diamond
	colExpiry = "#212121" // the expiry: a dark bar across the cell
	colLive   = "#43a047" // reads return the cell
	colHidden = "#bdbdbd" // reads skip the cell, GC must keep it
	colGC     = "#c62828" // reads skip the cell, GC may remove it (hatched)
	colText   = "#212121"
	colMuted  = "#616161"
	colAxis   = "#757575"
)

// fontSize is the body text size; widths of text are estimated from it, as
// the generator cannot measure the viewer's font.
const fontSize = 12

// textWidth estimates the width of s in a sans-serif font at size.
func textWidth(s string, size float64) float64 {
	return float64(len([]rune(s))) * size * 0.5
}

// A canvas accumulates one SVG document. Numbers are printed with at most
// one decimal, so the same figure is the same bytes on every run.
type canvas struct {
	b strings.Builder
}

// newCanvas starts a w×h document with a white background (so that it reads
// on a dark page too), its accessible title and description, and the hatch
// pattern and arrowhead the figures share.
func newCanvas(w, h int, title, desc string) *canvas {
	c := new(canvas)
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="%d" role="img" aria-labelledby="title desc">`+"\n", w, h, w, h, fontSize)
	c.printf("<title id=\"title\">%s</title>\n<desc id=\"desc\">%s</desc>\n", esc(title), esc(desc))
	c.printf(`<defs>
<pattern id="gc" width="7" height="7" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="7" height="7" fill="#ffebee"/><rect width="3" height="7" fill="%s"/></pattern>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>
</defs>
<rect width="%d" height="%d" fill="#ffffff"/>
`, colGC, colWrite, w, h)
	return c
}

// bytes closes the document and returns it.
func (c *canvas) bytes() []byte {
	c.printf("</svg>\n")
	return []byte(c.b.String())
}

func (c *canvas) printf(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

// num prints v with at most one decimal.
func num(v float64) string {
	v = math.Round(v*10) / 10
	if v == 0 {
		v = 0 // no "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) // writes to a strings.Builder never fail
	return b.String()
}

// rect draws a filled rectangle; fill may be "url(#gc)".
func (c *canvas) rect(x, y, w, h float64, fill string) {
	c.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", num(x), num(y), num(w), num(h), fill)
}

// line draws a line; dash is an SVG dash array or "".
func (c *canvas) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	extra := ""
	if dash != "" {
		extra = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	c.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>`+"\n",
		num(x1), num(y1), num(x2), num(y2), stroke, num(width), extra)
}

// arrow draws a line ending in an arrowhead at (x2, y2), in the write's
// colour: it leads from a write to what it stored.
func (c *canvas) arrow(x1, y1, x2, y2 float64) {
	c.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1" marker-end="url(#arrow)"/>`+"\n",
		num(x1), num(y1), num(x2), num(y2), colWrite)
}

// cellBar draws one cell's life on a timeline from x0 to x1: a dashed
// line labelled empty (at labelY) before its write at xw, then live until
// its expiry at xe, hidden until GC may remove it at xg, and collectable
// on, in a bar from y to y+h.
func (c *canvas) cellBar(x0, xw, xe, xg, x1, y, h float64, empty string, labelY float64) {
	barH, mid := h, y+h/2
	c.line(x0, mid, xw, mid, "#9e9e9e", 1.5, "2 4")
	c.text((x0+xw)/2, labelY, style{fill: colMuted, italic: true, anchor: "middle", size: 11}, empty)
	c.rect(xw, y, xe-xw, barH, colLive)
	c.rect(xe, y, xg-xe, barH, colHidden)
	c.rect(xg, y, x1-xg, barH, "url(#gc)")
	c.goesOn(x1, mid)
}

// goesOn marks a span that goes on past the right edge at (x, y): a
// triangle in the GC colour.
func (c *canvas) goesOn(x, y float64) {
	c.printf(`<path d="M%s,%s L%s,%s L%s,%s z" fill="%s"/>`+"\n",
		num(x+1), num(y-7), num(x+13), num(y), num(x+1), num(y+7), colGC)
}

// A style is how a piece of text looks.
type style struct {
	size   float64 // 0: fontSize
	fill   string  // "": colText
	bold   bool
	italic bool
	anchor string // "start", "middle" or "end"; "": start
	halo   bool   // a white outline, for text over lines or hatching
}

// text draws s with its baseline at y.
func (c *canvas) text(x, y float64, st style, s string) {
	c.printf(`<text x="%s" y="%s"%s>%s</text>`+"\n", num(x), num(y), st.attrs(), esc(s))
}

func (st style) attrs() string {
	var b strings.Builder
	if st.size != 0 {
		fmt.Fprintf(&b, ` font-size="%s"`, num(st.size))
	}
	if st.fill != "" {
		fmt.Fprintf(&b, ` fill="%s"`, st.fill)
	}
	if st.bold {
		b.WriteString(` font-weight="bold"`)
	}
	if st.italic {
		b.WriteString(` font-style="italic"`)
	}
	if st.anchor != "" && st.anchor != "start" {
		fmt.Fprintf(&b, ` text-anchor="%s"`, st.anchor)
	}
	if st.halo {
		b.WriteString(` stroke="#ffffff" stroke-width="4" stroke-linejoin="round" paint-order="stroke"`)
	}
	return b.String()
}

// chip draws s on a white label, for text over hatching.
func (c *canvas) chip(x, y float64, st style, s string) {
	size := st.size
	if size == 0 {
		size = fontSize
	}
	w := textWidth(s, size) * 1.1
	if st.bold {
		w *= 1.1
	}
	left := x
	switch st.anchor {
	case "middle":
		left -= w / 2
	case "end":
		left -= w
	}
	c.printf(`<rect x="%s" y="%s" width="%s" height="%s" rx="3" fill="#ffffff" fill-opacity="0.92"/>`+"\n",
		num(left-4), num(y-size), num(w+8), num(size*1.4))
	c.text(x, y, st, s)
}

// diamond marks a stored timestamp at (x, y).
func (c *canvas) diamond(x, y float64) {
	const r = 6
	c.printf(`<path d="M%s,%s L%s,%s L%s,%s L%s,%s z" fill="%s" stroke="#ffffff" stroke-width="1.5"/>`+"\n",
		num(x), num(y-r), num(x+r), num(y), num(x), num(y+r), num(x-r), num(y), colStamp)
}

// writeMark marks a write at x: a line from y1 down to y2 under a
// triangle pointing down at it.
func (c *canvas) writeMark(x, y1, y2 float64) {
	c.line(x, y1, x, y2, colWrite, 2, "")
	c.printf(`<path d="M%s,%s L%s,%s L%s,%s z" fill="%s"/>`+"\n",
		num(x-6), num(y1-9), num(x+6), num(y1-9), num(x), num(y1), colWrite)
}

// expiryMark marks an expiry at x across a bar from y to y+h.
func (c *canvas) expiryMark(x, y, h float64) {
	c.rect(x-1.5, y-5, 3, h+10, colExpiry)
}

// A legendItem is one entry of a figure's legend.
type legendItem int

const (
	legWrite legendItem = iota
	legStamp
	legExpiry
	legLive
	legHidden
	legGC
)

var legendText = map[legendItem]string{
	legWrite:  "write",
	legStamp:  "stored timestamp",
	legExpiry: "expiry",
	legLive:   "reads return it",
	legHidden: "hidden, GC keeps it",
	legGC:     "hidden, GC may remove it",
}

// legend draws items in one row starting at (x, y), y being the middle of
// the row.
func (c *canvas) legend(x, y float64, items ...legendItem) {
	for _, it := range items {
		switch it {
		case legWrite:
			c.writeMark(x+7, y-2, y+8)
			x += 14
		case legStamp:
			c.diamond(x+6, y)
			x += 12
		case legExpiry:
			c.expiryMark(x+2, y-3, 6)
			x += 4
		case legLive:
			c.rect(x, y-6, 22, 12, colLive)
			x += 22
		case legHidden:
			c.rect(x, y-6, 22, 12, colHidden)
			x += 22
		case legGC:
			c.rect(x, y-6, 22, 12, "url(#gc)")
			x += 22
		}
		x += 5
		c.text(x, y+4, style{}, legendText[it])
		x += textWidth(legendText[it], fontSize) + 16
	}
}

// A timeScale maps instants from..to onto x0..x1.
type timeScale struct {
	from, to time.Time
	x0, x1   float64
}

func (s timeScale) x(t time.Time) float64 {
	return s.x0 + (s.x1-s.x0)*float64(t.Sub(s.from))/float64(s.to.Sub(s.from))
}

// axis draws a time axis at y with a labelled tick at each of ticks and an
// unlabelled one at each of minor.
func (c *canvas) axis(s timeScale, y float64, ticks []tick, minor []time.Time) {
	c.line(s.x0, y, s.x1, y, colAxis, 1, "")
	for _, t := range minor {
		c.line(s.x(t), y, s.x(t), y+3, colAxis, 1, "")
	}
	for _, t := range ticks {
		x := s.x(t.at)
		c.line(x, y, x, y+5, colAxis, 1, "")
		c.text(x, y+17, style{fill: colMuted, anchor: "middle", bold: t.bold, halo: true}, t.label)
	}
}

// A tick is a labelled instant on an axis.
type tick struct {
	at    time.Time
	label string
	bold  bool
}

// policy names a GC policy as the Go expression that makes it, such as
// "MaxAge(48h)"; bigtable's own String prints "age() > 172800000000".
func policy(p bigtable.GCPolicy) string {
	switch p := p.(type) {
	case bigtable.MaxAgeGCPolicy:
		return "MaxAge(" + short(time.Duration(p)) + ")"
	case bigtable.MaxVersionsGCPolicy:
		return fmt.Sprintf("MaxVersions(%d)", int(p))
	}
	return p.String()
}

// short prints d without its trailing zero units: "30m", "48h", "1h30m".
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// lifeName prints a lifetime as the library does, but with durations as
// short as policy's: "For(30m)" for "For(30m0s)".
func lifeName(l ttl.Lifetime) string {
	s := l.String()
	for _, long := range []string{"h0m0s)", "m0s)"} {
		s = strings.ReplaceAll(s, long, long[:1]+")")
	}
	return s
}

// title draws a figure's title line: the strategy in bold, then what it
// stands for.
func (c *canvas) title(strategy, rest string) {
	c.printf(`<text x="20" y="28" font-size="16"><tspan font-weight="bold">%s</tspan><tspan dx="14" font-size="13" fill="%s">%s</tspan></text>`+"\n",
		esc(strategy), colMuted, esc(rest))
}
