package sweep_test

import (
	"encoding/json"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/sweep"
)

// TestEventID: an event's ID is the same for the same expiry of the same
// thing, and differs when any part of it differs, including parts that
// would run together if joined.
func TestEventID(t *testing.T) {
	e := sweep.Event{Kind: sweep.Cell, Table: "t", Row: "r", Family: "f", Column: "c", Timestamp: 1000, Expired: base}
	id := e.ID()
	assert.Len(t, id, 32)
	same := e
	same.Value, same.Expired = []byte("v"), base.Add(time.Hour)
	assert.Equal(t, id, same.ID(), "the value and the expiry instant are not the identity")
	for name, change := range map[string]func(*sweep.Event){
		"kind":      func(e *sweep.Event) { e.Kind = sweep.Column },
		"table":     func(e *sweep.Event) { e.Table = "u" },
		"row":       func(e *sweep.Event) { e.Row = "s" },
		"family":    func(e *sweep.Event) { e.Family = "g" },
		"column":    func(e *sweep.Event) { e.Column = "d" },
		"timestamp": func(e *sweep.Event) { e.Timestamp = 2000 },
		"run on":    func(e *sweep.Event) { e.Row, e.Family = "rf", "" },
	} {
		other := e
		change(&other)
		assert.NotEqual(t, id, other.ID(), name)
	}
}

// TestEventJSON: events encode every byte of their row keys and columns,
// UTF-8 or not, with their ID, and decode back.
func TestEventJSON(t *testing.T) {
	for _, e := range []sweep.Event{
		{Kind: sweep.Cell, Table: "t", Row: "user#1", Family: "sess", Column: "token", Timestamp: 1903770000000000, Expired: base, Value: []byte("v")},
		{Kind: sweep.Row, Table: "t", Row: "\xff\x00bin", Family: "f", Column: "\xfe", Timestamp: 1000, Expired: base},
		{Kind: sweep.Column, Table: "t", Row: "é", Family: "f", Column: "", Timestamp: 0, Expired: base},
	} {
		b, err := json.Marshal(e)
		require.NoError(t, err)
		var fields map[string]any
		require.NoError(t, json.Unmarshal(b, &fields))
		assert.Equal(t, e.ID(), fields["id"])
		assert.Equal(t, e.Kind.String(), fields["kind"])
		var back sweep.Event
		require.NoError(t, json.Unmarshal(b, &back))
		back.Expired = back.Expired.In(e.Expired.Location())
		assert.Equal(t, e, back, "%s", b)
	}
	b, _ := json.Marshal(sweep.Event{Kind: sweep.Row, Table: "t", Row: "\xff", Expired: base})
	assert.Contains(t, string(b), `"row_base64":"/w=="`)
	assert.NotContains(t, string(b), `"row":`)

	var e sweep.Event
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"kind":"table"}`), &e), `granularity "table": want cell, column or row`)
	assert.Error(t, json.Unmarshal([]byte(`[]`), &e))
}

// TestGranularity: the names of the granularities parse back, plurals too.
func TestGranularity(t *testing.T) {
	for _, g := range []sweep.Granularity{sweep.Cell, sweep.Column, sweep.Row} {
		for _, s := range []string{g.String(), g.String() + "s"} {
			got, err := sweep.ParseGranularity(s)
			assert.NoError(t, err)
			assert.Equal(t, g, got)
		}
	}
	_, err := sweep.ParseGranularity("Cell")
	assert.Error(t, err)
	assert.Equal(t, "Granularity(9)", sweep.Granularity(9).String())
}

// TestGranularityFlag: a *Granularity is a flag.Value, whose default
// prints as its name and whose refusal says what is wanted and keeps the
// value.
func TestGranularityFlag(t *testing.T) {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g := sweep.Column
	fs.Var(&g, "granularity", "what an event reports")
	assert.Equal(t, "column", fs.Lookup("granularity").DefValue)
	require.NoError(t, fs.Parse([]string{"-granularity", "rows"}))
	assert.Equal(t, sweep.Row, g)
	err := fs.Parse([]string{"-granularity", "table"})
	assert.EqualError(t, err, `invalid value "table" for flag -granularity: want cell, column or row`)
	assert.Equal(t, sweep.Row, g, "a refused value changes nothing")
}

// TestEventString: an event prints as one line that names what expired.
func TestEventString(t *testing.T) {
	e := sweep.Event{Kind: sweep.Column, Table: "t", Row: "u", Family: "f", Column: "c\n", Expired: base}
	assert.Equal(t, `column expired 2030-04-30T09:00:00Z: table "t" row "u" f:"c\n"`, e.String())
	e.Kind = sweep.Row
	assert.Equal(t, `row expired 2030-04-30T09:00:00Z: table "t" row "u"`, e.String())
}
