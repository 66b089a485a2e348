package main

import (
	"fmt"
	"time"
)

// seqnumFigure draws versions 1 to 5 of one column under
// SequenceNumbers(3), written at irregular moments of a week: each is
// stored at its number in milliseconds after the Unix epoch, whenever it
// was written, and reads return the newest three.
//
// It is long on purpose: one figure drawn top to bottom on one canvas, so
// that the coordinates a reader checks against the picture stay together.
func seqnumFigure() ([]byte, error) {
	s := seqnumStrategy
	vs, keep, err := versions(s, seqnumWritten)
	if err != nil {
		return nil, err
	}
	gone := 0
	for _, v := range vs {
		if !v.returned {
			gone++
		}
	}

	const w, h = 800, 320
	desc := fmt.Sprintf("Versions 1 to %d of one column under %v, whose family GC policy is %s, written at irregular moments of a week. ",
		len(vs), s, policy(s.GCPolicy()))
	for _, v := range vs {
		state := "reads return it"
		if !v.returned {
			state = "hidden, GC may remove it"
		}
		desc += fmt.Sprintf("Version %d, written %s, is stored at %d ms after the Unix epoch: %s. ",
			v.seq, v.written.Format("Mon 15:04"), v.stamp/1000, state)
	}
	cv := newCanvas(w, h, fmt.Sprintf("%v: versions 1 to %d of one column", s, len(vs)), desc+
		"Time plays no part: the timestamp is the version number, and a version leaves when enough newer ones exist.")
	cv.title(fmt.Sprint(s), "family GC policy "+policy(s.GCPolicy())+" · stored timestamp = version × 1 ms")
	cv.legend(20, 54, legWrite, legStamp, legLive, legGC)

	// Top: the wall clock, when each version was written.
	clock := timeScale{from: monday, to: monday.Add(7 * 24 * time.Hour), x0: 200, x1: 780}
	const clockY = 112.0
	cv.text(20, clockY-8, style{bold: true}, "written at")
	cv.text(20, clockY+7, style{fill: colMuted}, "wall clock, one week")
	var ticks []tick
	var minor []time.Time
	for t := clock.from; !t.After(clock.to); t = t.Add(24 * time.Hour) {
		minor = append(minor, t)
		if t.Before(clock.to) {
			ticks = append(ticks, tick{at: t.Add(12 * time.Hour), label: t.Format("Mon")})
		}
	}
	cv.axis(clock, clockY, nil, minor)
	for _, t := range ticks {
		cv.text(clock.x(t.at), clockY+17, style{fill: colMuted, anchor: "middle"}, t.label)
	}

	// Bottom: the stored timestamps, one millisecond per version.
	epoch := time.Unix(0, 0).UTC()
	stored := timeScale{from: epoch, to: vs[len(vs)-1].stamp.Time().Add(time.Millisecond), x0: 200, x1: 780}
	const boxY, boxH, boxW = 178.0, 26.0, 64.0
	axisY := boxY + boxH + 14
	cv.text(20, boxY+boxH/2-2, style{bold: true}, "stored timestamp")
	cv.text(20, boxY+boxH/2+13, style{fill: colMuted}, "ms after 1970-01-01")
	cv.text(20, (clockY+boxY)/2+4, style{fill: colWrite, italic: true, size: 11}, "↓ the version number,")
	cv.text(32, (clockY+boxY)/2+18, style{fill: colWrite, italic: true, size: 11}, "not the write time")
	ticks = ticks[:0]
	for _, v := range vs {
		ticks = append(ticks, tick{at: v.stamp.Time(), label: fmt.Sprintf("%d ms", v.stamp/1000)})
	}
	cv.axis(stored, axisY, ticks, []time.Time{epoch})

	var liveFrom, liveTo, goneFrom, goneTo float64
	for i, v := range vs {
		xw, xs := clock.x(v.written), stored.x(v.stamp.Time())
		cv.arrow(xw, clockY+22, xs, boxY-4)
		cv.writeMark(xw, clockY-2, clockY+4)
		cv.text(xw, clockY-14, style{fill: colWrite, bold: true, anchor: "middle"}, fmt.Sprintf("v%d", v.seq))

		fill, ink := colLive, "#ffffff"
		if !v.returned {
			fill, ink = "url(#gc)", colGC
		}
		cv.rect(xs-boxW/2, boxY, boxW, boxH, fill)
		if v.returned {
			cv.text(xs, boxY+boxH/2+4, style{fill: ink, bold: true, anchor: "middle"}, fmt.Sprintf("v%d", v.seq))
		} else {
			cv.chip(xs, boxY+boxH/2+4, style{fill: ink, bold: true, anchor: "middle"}, fmt.Sprintf("v%d", v.seq))
		}
		cv.diamond(xs, axisY)
		left, right := xs-boxW/2, xs+boxW/2
		switch {
		case v.returned && liveTo == 0:
			liveFrom, liveTo = left, right
		case v.returned:
			liveTo = right
		case i == 0:
			goneFrom, goneTo = left, right
		default:
			goneTo = right
		}
	}
	braceY := axisY + 32
	cv.brace(liveFrom, liveTo, braceY, "#2e7d32", fmt.Sprintf("reads return the newest %d", keep))
	if gone > 0 {
		cv.brace(goneFrom, goneTo, braceY, colGC, "hidden, GC may remove them")
	}

	cv.text(20, h-28, style{fill: colMuted},
		"Time plays no part: a version is stored at its number, whenever it is written, and never expires; it leaves when")
	cv.text(20, h-12, style{fill: colMuted},
		fmt.Sprintf("%d newer versions exist. Never give this family an age-based GC policy: to MaxAge, every cell is from 1970.", keep))
	return cv.bytes(), nil
}

// brace marks the span x1..x2 at y from below, with a label under it.
func (c *canvas) brace(x1, x2, y float64, colour, label string) {
	c.line(x1, y-6, x1, y, colour, 1.5, "")
	c.line(x1, y, x2, y, colour, 1.5, "")
	c.line(x2, y-6, x2, y, colour, 1.5, "")
	c.text((x1+x2)/2, y+16, style{fill: colour, bold: true, anchor: "middle"}, label)
}
