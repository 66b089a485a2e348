package main

import (
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
)

// defaultFigure draws three cells written at the same moment under
// DefaultExpiration(48h), with Default, a shorter and a longer lifetime:
// each is stamped 48h before its expiry, so that GC's MaxAge(48h), which
// counts from the timestamp, comes due exactly when the cell expires.
//
// It is long on purpose: one figure drawn top to bottom on one canvas, so
// that the coordinates a reader checks against the picture stay together.
func defaultFigure() ([]byte, error) {
	s, written := defaultWrites.strategy, defaultWrites.written
	cells, err := defaultWrites.cells()
	if err != nil {
		return nil, err
	}
	maxAge, ok := s.GCPolicy().(bigtable.MaxAgeGCPolicy)
	if !ok {
		return nil, fmt.Errorf("%v: GC policy %v is not a maximum age", s, s.GCPolicy())
	}
	d := time.Duration(maxAge)
	rel := func(t time.Time) string { return since(t, written) }

	const w, h = 800, 330
	desc := fmt.Sprintf("Three cells written at the same moment under %v, whose family GC policy is %s. ", s, policy(s.GCPolicy()))
	for _, c := range cells {
		desc += fmt.Sprintf("%s: stored timestamp %s, reads return it until %s, GC may remove it after %s. ",
			lifeName(c.life), rel(c.stamp), rel(c.expiry), rel(c.gcAfter))
	}
	cv := newCanvas(w, h, fmt.Sprintf("%v: three cells written at the same moment", s), desc+
		"Each cell is stored 48h before its expiry, so GC, which counts from the timestamp, may remove it exactly when reads stop returning it.")
	cv.title("DefaultExpiration("+short(d)+")", "family GC policy "+policy(s.GCPolicy())+" · stored timestamp = expiry − "+short(d))
	cv.legend(20, 54, legWrite, legStamp, legExpiry, legLive, legGC)

	scale := timeScale{from: written.Add(-52 * time.Hour), to: written.Add(84 * time.Hour), x0: 200, x1: 780}
	const firstBar, rowStep, barH = 92.0, 64.0, 18.0
	xw := scale.x(written)
	lastBar := firstBar + rowStep*float64(len(cells)-1)
	cv.line(xw, firstBar-12, xw, lastBar+barH+26, colWrite, 1, "4 3")
	for i, c := range cells {
		y := firstBar + rowStep*float64(i)
		mid := y + barH/2
		xs, xe, xg := scale.x(c.stamp), scale.x(c.expiry), scale.x(c.gcAfter)

		cv.text(20, y+2, style{bold: true}, "Set(…, "+lifeName(c.life)+")")
		cv.text(20, y+17, style{fill: colMuted}, "ts = "+rel(c.stamp))
		cv.text(20, y+32, style{fill: colMuted}, "expiry = "+rel(c.expiry))

		cv.cellBar(scale.x0, xw, xe, xg, scale.x1, y, barH, "no cell yet", mid-5)
		if live := "reads return it"; xe-xw > textWidth(live, fontSize)*1.2+16 {
			cv.text((xw+xe)/2, mid+4, style{fill: "#ffffff", bold: true, anchor: "middle"}, live)
		} else {
			cv.text(xe+8, y-4, style{size: 11, fill: "#2e7d32", bold: true}, "← reads return it for "+short(c.expiry.Sub(c.written)))
		}
		if gone := "GC may remove it"; scale.x1-xg > textWidth(gone, fontSize)*1.2+24 {
			cv.chip((xg+scale.x1)/2, mid+4, style{fill: colGC, bold: true, anchor: "middle"}, gone)
		}
		cv.writeMark(xw, y-4, y+barH+4)
		cv.expiryMark(xe, y, barH)

		// GC's maximum age, measured from the stored timestamp, under the
		// bar so that the write marks stay clear.
		low := y + barH + 10
		cv.line(xs, low, xg, low, colStamp, 1, "")
		cv.line(xg, low-4, xg, low+4, colStamp, 1, "")
		cv.diamond(xs, low)
		cv.chip((xs+xg)/2, low+4, style{size: 11, anchor: "middle"}, "ts + "+short(d))
	}

	var ticks []tick
	for t := written.Add(-48 * time.Hour); !t.After(scale.to); t = t.Add(24 * time.Hour) {
		ticks = append(ticks, tick{at: t, label: rel(t), bold: t.Equal(written)})
	}
	cv.axis(scale, lastBar+barH+26, ticks, nil)

	cv.text(20, h-28, style{fill: colMuted},
		"Each cell is stored "+short(d)+" before its expiry. GC's "+policy(s.GCPolicy())+" counts from that timestamp, so it may remove")
	cv.text(20, h-12, style{fill: colMuted},
		"the cell exactly when reads stop returning it: a shorter life is stamped in the past, a longer one in the future.")
	return cv.bytes(), nil
}

// since prints t relative to the write: "write", "write − 47h",
// "write + 24h".
func since(t, written time.Time) string {
	switch d := t.Sub(written); {
	case d > 0:
		return "write + " + short(d)
	case d < 0:
		return "write − " + short(-d)
	}
	return "write"
}
