package audit

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cellttl/ttl/internal/text"
)

// How a Report travels as JSON: a histogram's open ends have no bound
// (no zero-time sentinel), and empty buckets are left out unless the
// report's AllBuckets asks for them. Decoding restores every bucket, so
// that a decoded report merges and prints as the one encoded.

// MarshalJSON encodes the bucket with its bounds, an open end left out:
// {"until": …, "cells": …, "bytes": …} for the first bucket, {"from": …,
// …} for the last.
func (b Bucket) MarshalJSON() ([]byte, error) {
	from, until := text.OpenEnds(b.From, b.Until)
	return json.Marshal(struct {
		From  *time.Time `json:"from,omitempty"`
		Until *time.Time `json:"until,omitempty"`
		Cells int64      `json:"cells"`
		Bytes int64      `json:"bytes"`
	}{from, until, b.Cells, b.Bytes})
}

// MarshalJSON encodes the report; each histogram lists its non-empty
// buckets only, unless a.AllBuckets.
func (a *Report) MarshalJSON() ([]byte, error) {
	type plain Report // without this method
	out := plain(*a)
	if !a.AllBuckets {
		out.Families = make([]Family, len(a.Families))
		for i, f := range a.Families {
			f.Expiring, f.Collectable = nonEmpty(f.Expiring), nonEmpty(f.Collectable)
			out.Families[i] = f
		}
	}
	return json.Marshal(out)
}

// nonEmpty returns the buckets of h that count something, never nil.
func nonEmpty(h []Bucket) []Bucket {
	out := []Bucket{}
	for _, b := range h {
		if b.Cells != 0 || b.Bytes != 0 {
			out = append(out, b)
		}
	}
	return out
}

// UnmarshalJSON decodes a report that MarshalJSON encoded, with every
// bucket of its histograms, empty or not. It refuses a bucket whose
// bounds are not edges of the report's histograms.
func (a *Report) UnmarshalJSON(b []byte) error {
	type plain Report // without this method
	var in plain
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*a = Report(in)
	for i := range a.Families {
		f := &a.Families[i]
		var err error
		if f.Expiring, err = a.histogram(f.Family, f.Expiring); err != nil {
			return err
		}
		if f.Collectable, err = a.histogram(f.Family, f.Collectable); err != nil {
			return err
		}
	}
	return nil
}

// histogram returns the full histogram at a.Now holding the buckets of
// h, which may leave empty ones out.
func (a *Report) histogram(family string, h []Bucket) ([]Bucket, error) {
	full := newBuckets(a.Now)
	for _, bk := range h {
		i, ok := a.bucketIndex(bk)
		if !ok {
			return nil, fmt.Errorf("audit: family %q: a bucket from %v until %v is not one of the report's at %v",
				family, bk.From, bk.Until, a.Now)
		}
		full[i].Add(bk.Count)
	}
	return full, nil
}

// bucketIndex returns the place of bk in a histogram at a.Now, and false
// when its bounds are not one of its buckets'.
func (a *Report) bucketIndex(bk Bucket) (int, bool) {
	i := 0
	if !bk.From.IsZero() {
		i = bucketOf(bk.From.Sub(a.Now))
	}
	want := newBuckets(a.Now)
	if i >= len(want) || !want[i].From.Equal(bk.From) || !want[i].Until.Equal(bk.Until) {
		return 0, false
	}
	return i, true
}
