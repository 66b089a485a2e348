package sweep

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"cloud.google.com/go/bigtable"
)

// A Granularity is what a sweep reports as one event: each expired cell,
// or a column or a row once nothing in it is live.
type Granularity uint8

const (
	// Cell reports each cell that expired.
	Cell Granularity = iota
	// Column reports a column whose last live cell expired: a cell of it
	// expired, and no cell of it is live. A column kept alive (by Touch,
	// KeepAlive, a newer Set or a Replace) produces no event while a cell
	// of it is live.
	Column
	// Row reports a row whose last live cell in the swept families
	// expired: a cell of it expired, and no cell of it in those families
	// is live. Families the sweep is not given are not looked at.
	Row
)

// String returns "cell", "column" or "row".
func (g Granularity) String() string {
	switch g {
	case Cell:
		return "cell"
	case Column:
		return "column"
	case Row:
		return "row"
	}
	return "Granularity(" + strconv.Itoa(int(g)) + ")"
}

// ParseGranularity parses "cell", "column" or "row" (or their plurals).
func ParseGranularity(s string) (Granularity, error) {
	for g := Cell; g <= Row; g++ {
		if s == g.String() || s == g.String()+"s" {
			return g, nil
		}
	}
	return 0, fmt.Errorf("granularity %q: want cell, column or row", s)
}

// Set parses s as ParseGranularity does, so that a *Granularity is a
// flag.Value: flag.Var(&opts.Granularity, "granularity", "cell, column or
// row"). Its error says only what is wanted, as the flag package prefixes
// the flag and the value.
func (g *Granularity) Set(s string) error {
	v, err := ParseGranularity(s)
	if err != nil {
		return errors.New("want cell, column or row")
	}
	*g = v
	return nil
}

// An Event reports that something expired: one cell, a column or a row
// (see Granularity). The cell it names is the one whose expiry made the
// event: for a column or a row, the one that expired last.
type Event struct {
	// Kind is what expired.
	Kind Granularity
	// Table and Row locate it; Family and Column name the cell (for a row
	// event, the cell that expired last).
	Table, Row, Family, Column string
	// Timestamp is the cell's timestamp: its expiry, or its expiry less
	// its family's default, as its strategy encodes it.
	Timestamp bigtable.Timestamp
	// Expired is the instant the cell expired: from then on the library's
	// reads no longer return it.
	Expired time.Time
	// Value is the cell's value, when the sweep reads values
	// (Options.Values); nil otherwise.
	Value []byte
}

// ID returns the event's identity: the same for the same expiry of the
// same cell, column or row, however often it is reported, and different
// for any other. It is a hash of the kind, table, row, family, column and
// timestamp, 32 hexadecimal digits, so that a consumer can deduplicate the
// events a resumed sweep delivers again (at most one batch).
func (e Event) ID() string {
	h := sha256.New()
	for _, part := range []string{"cellttl sweep", e.Kind.String(), e.Table, e.Row, e.Family, e.Column, strconv.FormatInt(int64(e.Timestamp), 10)} {
		// Length-prefixed, so that no two events' parts run together
		// into the same bytes.
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// String returns the event as one line, such as
// `column expired 2030-04-30T09:00:00Z: table "t" row "user#1" sess:"token"`.
func (e Event) String() string {
	where := fmt.Sprintf("table %q row %q", e.Table, e.Row)
	if e.Kind != Row {
		where += fmt.Sprintf(" %s:%s", e.Family, strconv.Quote(e.Column))
	}
	return fmt.Sprintf("%v expired %s: %s", e.Kind, e.Expired.UTC().Format(time.RFC3339Nano), where)
}

// MarshalJSON encodes the event as an object: kind, id, table, row,
// family, column, timestamp (microseconds), expired (RFC 3339) and value
// (base64, when read). A row key or column that is not valid UTF-8 is
// encoded in base64 as row_base64 or column_base64 instead, so that no
// byte of it is lost.
func (e Event) MarshalJSON() ([]byte, error) {
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
	out.Row, out.RowBase64 = utf8OrBase64(e.Row)
	out.Column, out.ColumnBase64 = utf8OrBase64(e.Column)
	return json.Marshal(out)
}

// utf8OrBase64 returns s for JSON: itself when it is valid UTF-8, or else its
// base64.
func utf8OrBase64(s string) (*string, string) {
	if utf8.ValidString(s) {
		return &s, ""
	}
	return nil, base64.StdEncoding.EncodeToString([]byte(s))
}

// UnmarshalJSON decodes an event MarshalJSON encoded, as a consumer of
// the events (from cellttl sweep's output or a Pub/Sub message) reads it.
// The id is not decoded: ID recomputes it.
func (e *Event) UnmarshalJSON(b []byte) error {
	var in struct {
		Kind         string             `json:"kind"`
		Table        string             `json:"table"`
		Row          string             `json:"row"`
		RowBase64    []byte             `json:"row_base64"`
		Family       string             `json:"family"`
		Column       string             `json:"column"`
		ColumnBase64 []byte             `json:"column_base64"`
		Timestamp    bigtable.Timestamp `json:"timestamp"`
		Expired      time.Time          `json:"expired"`
		Value        []byte             `json:"value"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	kind, err := ParseGranularity(in.Kind)
	if err != nil {
		return fmt.Errorf("sweep: decoding an event: %w", err)
	}
	*e = Event{Kind: kind, Table: in.Table, Row: in.Row, Family: in.Family, Column: in.Column,
		Timestamp: in.Timestamp, Expired: in.Expired, Value: in.Value}
	if in.RowBase64 != nil {
		e.Row = string(in.RowBase64)
	}
	if in.ColumnBase64 != nil {
		e.Column = string(in.ColumnBase64)
	}
	return nil
}
