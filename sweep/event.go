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
	sum := e.idSum()
	return hex.EncodeToString(sum[:16])
}

// idSum returns the hash whose first 16 bytes are the event's ID: of its
// parts, each length-prefixed ("4:cell"), so that no two events' parts
// run together into the same bytes.
func (e Event) idSum() [sha256.Size]byte {
	var buf [256]byte
	var ts [20]byte
	b := buf[:0]
	for _, part := range [...]string{"cellttl sweep", e.Kind.String(), e.Table, e.Row, e.Family, e.Column} {
		b = appendIDPart(b, part)
	}
	b = appendIDPart(b, string(strconv.AppendInt(ts[:0], int64(e.Timestamp), 10)))
	return sha256.Sum256(b)
}

// appendIDPart appends part to b as ID hashes it: its length, a colon,
// then its bytes.
func appendIDPart(b []byte, part string) []byte {
	b = strconv.AppendInt(b, int64(len(part)), 10)
	return append(append(b, ':'), part...)
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
	expired := e.Expired.UTC()
	if y := expired.Year(); y < 0 || y > 9999 {
		_, err := expired.MarshalJSON() // says the year is out of range
		return nil, fmt.Errorf("sweep: encoding the event of row %q: %w", e.Row, err)
	}
	b := make([]byte, 0, 192+len(e.Table)+len(e.Row)+len(e.Family)+len(e.Column)+base64.StdEncoding.EncodedLen(len(e.Value)))
	b = append(b, `{"kind":"`...)
	b = append(b, e.Kind.String()...)
	b = append(b, `","id":"`...)
	sum := e.idSum()
	b = hex.AppendEncode(b, sum[:16])
	b = append(b, `","table":`...)
	b = appendJSONString(b, e.Table)
	b = appendUTF8OrBase64(b, "row", e.Row)
	if e.Family != "" {
		b = append(b, `,"family":`...)
		b = appendJSONString(b, e.Family)
	}
	b = appendUTF8OrBase64(b, "column", e.Column)
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, int64(e.Timestamp), 10)
	b = append(b, `,"expired":"`...)
	b = expired.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if len(e.Value) > 0 {
		b = append(b, `,"value":"`...)
		b = base64.StdEncoding.AppendEncode(b, e.Value)
		b = append(b, '"')
	}
	return append(b, '}'), nil
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
