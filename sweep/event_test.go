package sweep_test

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"testing"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/bigtable"
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

// TestEventIDStable: IDs are a contract with consumers that deduplicate,
// so an event's ID never changes between versions: these were computed by
// the first release's encoding.
func TestEventIDStable(t *testing.T) {
	at := time.Date(2030, 4, 30, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	for want, e := range map[string]sweep.Event{
		"55b25a6ef5a3174ba7144346120a179e": {Kind: sweep.Cell, Table: "t", Row: "user#1", Family: "sess", Column: "token", Timestamp: 1903770000000000, Expired: at},
		"9eded68c2bb74c60611dd088d5faf0eb": {Kind: sweep.Row, Table: "t<>&", Row: "\xff\x00bin", Family: "f", Column: "\xfe", Timestamp: -5},
		"c6c24ff577019d8a5448c8817ff8529c": {Kind: sweep.Column, Row: "é\u2028\b\f\n\r\t\x01\"\\", Expired: at},
	} {
		assert.Equal(t, want, e.ID(), "%v", e)
	}
}

// TestEventJSONAsEncodingJSON: MarshalJSON writes by hand, byte for byte,
// what encoding/json writes for the event's fields.
func TestEventJSONAsEncodingJSON(t *testing.T) {
	for _, e := range eventJSONSeeds() {
		assertEventJSON(t, e)
	}
	_, err := json.Marshal(sweep.Event{Expired: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	assert.ErrorContains(t, err, "year outside of range")
}

// FuzzEventJSON: MarshalJSON agrees with encoding/json on any strings,
// timestamp and value.
func FuzzEventJSON(f *testing.F) {
	for _, e := range eventJSONSeeds() {
		f.Add(uint8(e.Kind), e.Table, e.Row, e.Family, e.Column, int64(e.Timestamp), e.Expired.UnixNano(), e.Value)
	}
	f.Fuzz(func(t *testing.T, kind uint8, table, row, family, column string, ts, expired int64, value []byte) {
		assertEventJSON(t, sweep.Event{Kind: sweep.Granularity(kind % 3), Table: table, Row: row, Family: family, Column: column,
			Timestamp: bigtable.Timestamp(ts), Expired: time.Unix(0, expired), Value: value})
	})
}

func eventJSONSeeds() []sweep.Event {
	at := time.Date(2030, 4, 30, 9, 0, 0, 123456789, time.FixedZone("x", 3600))
	return []sweep.Event{
		{Kind: sweep.Cell, Table: "t", Row: "user#1", Family: "sess", Column: "token", Timestamp: 1903770000000000, Expired: at},
		{Kind: sweep.Row, Table: "t<>&", Row: "\xff\x00bin", Family: "f", Column: "\xfe", Timestamp: -5, Value: []byte("v\x00")},
		{Kind: sweep.Column, Row: "é\u2028\u2029\b\f\n\r\t\x01\x7f\"\\/", Expired: at.UTC(), Value: []byte{}},
		{Kind: sweep.Cell, Table: "日本", Row: "ok\xffthen", Column: "a\xc0b", Expired: time.Unix(0, 1)},
	}
}

// assertEventJSON checks e's MarshalJSON against encoding/json's encoding
// of the same fields, as the first release wrote it.
func assertEventJSON(t *testing.T, e sweep.Event) {
	t.Helper()
	out := struct {
		Kind         string             `json:"kind"`
		ID           string             `json:"id"`
		Table        string             `json:"table"`
		Row          *string            `json:"row,omitempty"`
		RowBase64    string             `json:"row_base64,omitempty"`
		Family       string             `json:"family,omitempty"`
		Column       *string            `json:"column,omitempty"`
		ColumnBase64 string             `json:"column_base64,omitempty"`
		Timestamp    bigtable.Timestamp `json:"timestamp"`
		Expired      time.Time          `json:"expired"`
		Value        []byte             `json:"value,omitempty"`
	}{Kind: e.Kind.String(), ID: e.ID(), Table: e.Table, Family: e.Family, Timestamp: e.Timestamp, Expired: e.Expired.UTC(), Value: e.Value}
	split := func(s string) (*string, string) {
		if utf8.ValidString(s) {
			return &s, ""
		}
		return nil, base64.StdEncoding.EncodeToString([]byte(s))
	}
	out.Row, out.RowBase64 = split(e.Row)
	out.Column, out.ColumnBase64 = split(e.Column)
	want, wantErr := json.Marshal(out)
	got, err := e.MarshalJSON()
	if wantErr != nil {
		assert.Error(t, err)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
	viaMarshal, err := json.Marshal(e)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(viaMarshal), "json.Marshal leaves it as it is")
}
