package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/text"
	"github.com/cellttl/ttl/policy"
)

var inspectCommand = &command{
	name:       "inspect",
	args:       " [-other FAMILY]... [-now TIME] [-write-times] [-read-margin DURATION] [-app-profile PROFILE] [-format json] ROW",
	positional: "ROW",
	help: `Inspect reads every cell stored in ROW, expired or not, and prints its
timestamp (the sequence number in a seqnum family), its expiry under the
family's strategy, the time left (the versions left in a seqnum family),
and whether a read through the library, configured as the flags say, would
return it, or why not.

Declare the table's families without a strategy with -other, as the
application does with ttl.OtherFamilies: cells of undeclared families are
then not returned. Without -other, every other family is passed through.
A family given with -family or -other that the table does not have is an
refused (exit 3), with the nearest name it has suggested.`,
	flags: func(fs *flag.FlagSet, c *config) {
		dataFlags(fs, c)
		fs.Var(&c.others, "other", "a `family` without a strategy (ttl.OtherFamilies); repeat for each")
		nowFlag(fs, c)
		fs.Var(&c.now, "at", "deprecated: the same as -now `time`")
		fs.BoolVar(&c.writeTimes, "write-times", false, "the table records write times (ttl.RecordWriteTime): show them")
		fs.DurationVar(&c.margin, "read-margin", 0, "the table's read margin (ttl.WithReadMargin)")
	},
	run: runInspect,
}

// cellKey identifies a cell of a row.
type cellKey struct {
	column string
	ts     bigtable.Timestamp
}

// inspectedCell is a cell as inspect lists it, and as -format json gives
// it.
type inspectedCell struct {
	Family    string `json:"family"`
	Column    string `json:"column"`
	Timestamp string `json:"timestamp"`
	Expires   string `json:"expires"`
	Left      string `json:"left"`
	Read      string `json:"read"`
	Written   string `json:"written,omitempty"`
	Value     string `json:"value"`
}

// runInspect runs inspect: it reads one row raw and prints each cell with
// its timestamp, expiry and what reads and GC do with it. It is long
// because it is the command's one straight path, flags to exit status.
func runInspect(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	at := c.judgedAt()
	k, err := connectFamilies(ctx, c, append(c.families.Names(), c.others...))
	if err != nil {
		return fail(stderr, "inspect", err)
	}
	defer k.close()
	raw := k.data.Open(c.table)
	tbl, readOpts, err := inspectTable(c, raw, at)
	if err != nil {
		return fail(stderr, "inspect", err)
	}
	stored, err := raw.ReadRow(ctx, c.row)
	if err != nil {
		return fail(stderr, "inspect", err)
	}
	if len(stored) == 0 {
		fmt.Fprintf(stderr, "cellttl inspect: row %q not found in table %q\n", c.row, c.table)
		return exitFailed
	}
	live, err := tbl.ReadRow(ctx, c.row, readOpts...)
	if err != nil {
		return fail(stderr, "inspect", err)
	}
	cells := inspectCells(c, tbl, stored, live, at)

	var managed []string
	for _, name := range c.families.Names() {
		managed = append(managed, fmt.Sprintf("%s %v", name, c.families.Strategies[name]))
	}
	others := "other families passed through"
	if len(c.others) > 0 {
		others = "other families: " + strings.Join(c.others, ", ") + "; undeclared ones not returned"
	}
	families := strings.Join(managed, ", ") + "; " + others
	if c.format.json {
		err := printJSON(stdout, struct {
			Row      string          `json:"row"`
			Table    string          `json:"table"`
			At       string          `json:"at"`
			Families string          `json:"families"`
			Cells    []inspectedCell `json:"cells"`
		}{c.row, c.table, text.Time(at), families, cells})
		if err != nil {
			return fail(stderr, "inspect", err)
		}
		return exitOK
	}
	renderInspect(stdout, c, at, families, cells)
	return exitOK
}

// inspectTable returns the table as the application reads it, judged at
// at, and the read options of its reads.
func inspectTable(c *config, raw bigtable.TableAPI, at time.Time) (*ttl.Table, []ttl.ReadOption, error) {
	opts := []ttl.Option{ttl.WithClock(func() time.Time { return at }), ttl.WithReadMargin(c.margin)}
	if len(c.others) > 0 {
		opts = append(opts, ttl.OtherFamilies(c.others...))
	}
	var readOpts []ttl.ReadOption
	if c.writeTimes {
		opts = append(opts, ttl.RecordWriteTime())
		readOpts = append(readOpts, ttl.WithWriteTimes())
	}
	tbl, err := ttl.NewTable(raw, c.families.Strategies, opts...)
	return tbl, readOpts, err
}

// inspectCells lists every stored cell, families by name, each column
// newest first, with what the read through the library did with it.
func inspectCells(c *config, tbl *ttl.Table, stored, live bigtable.Row, at time.Time) []inspectedCell {
	returned := map[cellKey]bigtable.ReadItem{}
	for _, items := range live {
		for _, it := range items {
			returned[cellKey{it.Column, it.Timestamp}] = it
		}
	}
	families := make([]string, 0, len(stored))
	for f := range stored {
		families = append(families, f)
	}
	sort.Strings(families)
	var cells []inspectedCell
	for _, family := range families {
		newer := map[string]int{} // cells already listed per column: newer ones
		for _, it := range stored[family] {
			rank := newer[it.Column]
			newer[it.Column]++
			got, ok := returned[cellKey{it.Column, it.Timestamp}]
			cols := describeCell(c, tbl, family, it, rank, at, ok)
			x := inspectedCell{cols[0], cols[1], cols[2], cols[3], cols[4], cols[5], "", cellValue(c, family, it.Value)}
			if c.writeTimes {
				x.Written = "-"
				if t, ok := ttl.WriteTime(got); ok {
					x.Written = text.Time(t)
				}
			}
			cells = append(cells, x)
		}
	}
	return cells
}

// renderInspect prints the cells as a table.
func renderInspect(w io.Writer, c *config, at time.Time, families string, cells []inspectedCell) {
	fmt.Fprintf(w, "row %q of table %q at %s\n", c.row, c.table, text.Time(at))
	fmt.Fprintf(w, "families: %s\n", families)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := "FAMILY\tCOLUMN\tTIMESTAMP\tEXPIRES\tLEFT\tREAD"
	if c.writeTimes {
		header += "\tWRITTEN"
	}
	fmt.Fprintln(tw, header+"\tVALUE")
	for _, x := range cells {
		cols := []string{x.Family, x.Column, x.Timestamp, x.Expires, x.Left, x.Read}
		if c.writeTimes {
			cols = append(cols, x.Written)
		}
		fmt.Fprintln(tw, strings.Join(append(cols, x.Value), "\t"))
	}
	tw.Flush()
}

// describeCell returns the FAMILY to READ columns of a stored cell; rank is
// the number of newer cells in its column, read whether a read through the
// library returned it, and why not as the library says.
func describeCell(c *config, tbl *ttl.Table, family string, it bigtable.ReadItem, rank int, at time.Time, read bool) []string {
	qualifier := strings.TrimPrefix(it.Column, family+":")
	ts, expires, left := text.Time(it.Timestamp.Time()), "-", "-"
	s, managed := c.families.Strategies[family]
	var versions int
	seqnum := false
	if managed {
		versions, seqnum = s.Versions()
	}
	switch {
	case seqnum:
		ts = fmt.Sprintf("seq %d", it.Timestamp/1000)
		if it.Timestamp%1000 != 0 {
			ts = fmt.Sprintf("%dµs", it.Timestamp)
		}
		left = "superseded"
		if n := versions - rank; n > 0 {
			left = text.Plural(n, "version", "versions")
		}
	case managed:
		exp, ok := tbl.ExpiresAt(it)
		if !ok {
			expires, left = "never", "forever"
			break
		}
		expires = text.Time(exp)
		left = "expired " + formatDuration(at.Sub(exp)) + " ago"
		if d := exp.Sub(at); d > 0 {
			left = formatDuration(d)
		}
	}
	state := "yes"
	if !read {
		state = "no"
		if why := tbl.Hidden(it, rank, at); why != "" {
			state += ": " + why
		}
	}
	return []string{family, quote([]byte(qualifier), 40), ts, expires, left, state}
}

// cellValue prints a cell's value: a counter's sum in a family of int64
// sums (policy.ValueType: a ttl.Counter's), otherwise quoted.
func cellValue(c *config, family string, v []byte) string {
	if s, ok := c.families.Strategies[family]; ok && len(v) == 8 {
		if _, sums := policy.ValueType(s).(bigtable.AggregateType); sums {
			return fmt.Sprintf("sum %d", int64(binary.BigEndian.Uint64(v)))
		}
	}
	return quote(v, 24)
}

// quote returns b as is when it is short printable text, and otherwise as
// a Go string literal, cut at max bytes.
func quote(b []byte, max int) string {
	s, cut := string(b), ""
	if len(s) > max {
		s, cut = s[:max], "…"
	}
	plain := s != "" && utf8.ValidString(s)
	for _, r := range s {
		if !unicode.IsPrint(r) || r == ' ' || r == '"' {
			plain = false
			break
		}
	}
	if plain {
		return s + cut
	}
	return strconv.Quote(s) + cut
}

// formatDuration prints d with days, to the second from a minute on, to
// the millisecond below: "2d3h0m0s", "59.5s".
func formatDuration(d time.Duration) string {
	if d >= time.Minute {
		d = d.Truncate(time.Second)
	} else {
		d = d.Truncate(time.Millisecond)
	}
	const day = 24 * time.Hour
	switch {
	case d < day:
		return d.String()
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	}
	return fmt.Sprintf("%dd%v", d/day, d%day)
}
