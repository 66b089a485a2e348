package main

import (
	"fmt"
	"time"
)

// oneSecondFigure draws one cell written at 10:00 with For(30m) under
// OneSecond: the timestamp is the expiry itself, reads stop at it, and GC
// may remove the cell one second later; a zoom shows that second.
//
// It is long on purpose: one figure drawn top to bottom on one canvas, so
// that the coordinates a reader checks against the picture stay together.
func oneSecondFigure() ([]byte, error) {
	s := oneSecondWrite.strategy
	cells, err := oneSecondWrite.cells()
	if err != nil {
		return nil, err
	}
	c := cells[0]
	if !c.stamp.Equal(c.expiry) {
		return nil, fmt.Errorf("%v: stored timestamp %v is not the expiry %v", s, c.stamp, c.expiry)
	}
	hhmm := func(t time.Time) string { return t.Format("15:04") }
	hhmmss := func(t time.Time) string { return t.Format("15:04:05") }

	const w, h = 800, 270
	name := lifeName(c.life)
	cv := newCanvas(w, h, fmt.Sprintf("%v: a cell written at %s with %s", s, hhmm(c.written), name),
		fmt.Sprintf("The cell is stored with its expiry, %s, as its timestamp. Reads return it from the write until %s and never from %s on. "+
			"The family's GC policy %v may remove it after %s, once its timestamp is more than a second old; "+
			"Bigtable's GC does so when it runs, which can take up to a week.",
			hhmm(c.expiry), hhmm(c.expiry), hhmm(c.expiry), policy(s.GCPolicy()), hhmmss(c.gcAfter)))
	cv.title(fmt.Sprint(s), "family GC policy "+policy(s.GCPolicy())+" · stored timestamp = expiry")
	cv.legend(20, 54, legWrite, legStamp, legExpiry, legLive, legHidden, legGC)

	// The main timeline: from a little before the write to well after the
	// expiry.
	full := timeScale{from: c.written.Add(-5 * time.Minute), to: c.expiry.Add(20 * time.Minute), x0: 170, x1: 780}
	const barY, barH = 104.0, 20.0
	mid := barY + barH/2
	xw, xe, xg := full.x(c.written), full.x(c.expiry), full.x(c.gcAfter)

	// The zoom on the second after the expiry, drawn first so that the
	// main timeline lies over its guide lines.
	zoom := timeScale{from: c.expiry.Add(-time.Second), to: c.gcAfter.Add(1500 * time.Millisecond), x0: 170, x1: 780}
	const zoomY = 192.0
	cv.line(full.x(zoom.from), barY+barH, zoom.x0, zoomY, "#9e9e9e", 1, "3 3")
	cv.line(full.x(zoom.to), barY+barH, zoom.x1, zoomY, "#9e9e9e", 1, "3 3")

	cv.text(20, mid-2, style{bold: true}, "Set(…, "+name+")")
	cv.text(20, mid+13, style{fill: colMuted}, "at "+hhmm(c.written))
	cv.cellBar(full.x0, xw, xe, xg, full.x1, barY, barH, "no cell", mid-8)
	cv.text((xw+xe)/2, mid+4, style{fill: "#ffffff", bold: true, anchor: "middle"}, "reads return it")
	cv.chip((xg+full.x1)/2, mid+4, style{fill: colGC, bold: true, anchor: "middle"}, "GC may remove it")
	cv.writeMark(xw, barY-14, barY+barH+4)
	cv.text(xw, barY-27, style{fill: colWrite, bold: true, anchor: "middle"}, "write "+hhmm(c.written))
	cv.expiryMark(xe, barY, barH)
	cv.diamond(xe, barY-12)
	cv.text(xe, barY-27, style{anchor: "middle", bold: true}, "stored timestamp = expiry = "+hhmm(c.expiry))

	var ticks []tick
	for t := c.written; !t.After(full.to); t = t.Add(10 * time.Minute) {
		ticks = append(ticks, tick{at: t, label: hhmm(t)})
	}
	cv.axis(full, barY+barH+10, ticks, nil)

	// The zoom.
	mid = zoomY + barH/2
	cv.text(20, mid-2, style{bold: true}, "zoom on the second")
	cv.text(20, mid+13, style{fill: colMuted}, "after the expiry")
	xe, xg = zoom.x(c.expiry), zoom.x(c.gcAfter)
	cv.rect(zoom.x0, zoomY, xe-zoom.x0, barH, colLive)
	cv.rect(xe, zoomY, xg-xe, barH, colHidden)
	cv.rect(xg, zoomY, zoom.x1-xg, barH, "url(#gc)")
	cv.expiryMark(xe, zoomY, barH)
	cv.text((zoom.x0+xe)/2, mid+4, style{fill: "#ffffff", bold: true, anchor: "middle"}, "ts > now: live")
	cv.text((xe+xg)/2, mid+4, style{bold: true, anchor: "middle"}, "hidden, ts ≥ now − 1s")
	cv.chip((xg+zoom.x1)/2, mid+4, style{fill: colGC, bold: true, anchor: "middle"}, "ts < now − 1s: GC may remove it")
	ticks = ticks[:0]
	var minor []time.Time
	for t := zoom.from; !t.After(zoom.to); t = t.Add(500 * time.Millisecond) {
		if t.Nanosecond() == 0 {
			ticks = append(ticks, tick{at: t, label: hhmmss(t)})
		} else {
			minor = append(minor, t)
		}
	}
	cv.axis(zoom, zoomY+barH+6, ticks, minor)

	cv.text(20, h-12, style{fill: colMuted},
		"Reads hide the cell from its expiry on. Bigtable's GC removes it later, when it runs (up to a week); no read sees the difference.")
	return cv.bytes(), nil
}
