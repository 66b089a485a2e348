package inputs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
)

// docs/errors.md's table of refused inputs is generated from the tests: the
// invalid changes of badMutations (badmutations_test.go) and the calls of
// badCalls below. Each is run on a table of its own; the table lists the
// Go source of the input as written in the test, the sentinel error the
// call returned, and what the emulator table holds afterwards. A guide
// that differs fails the test; UPDATE_DOCS=1 rewrites it.

const (
	docBegin = "<!-- bad-inputs:begin -->"
	docEnd   = "<!-- bad-inputs:end -->"
)

// badFixture is what a bad call works on: tbl is a Table on api, a
// recorder on a fresh emulator table with the families sess
// (OneSecond), clicks (DefaultExpiration(48h)), rev (SequenceNumbers(3))
// and meta (no strategy), reading a fake clock at base; ctx is the calls'
// context.
type badFixture struct {
	ctx      context.Context
	api      bigtable.TableAPI
	tbl      *ttl.Table
	families map[string]ttl.Strategy
	good     *ttl.Mutation // a valid mutation
}

// badCall is a call the library refuses, the sentinel it returns, and the
// options of the fixture's table.
type badCall struct {
	name string
	opts []ttl.Option
	call func(x *badFixture) error
	want error
}

var badCalls = []badCall{
	{"nil table", nil, func(x *badFixture) error { return errOf(ttl.NewTable(nil, x.families)) }, ttl.ErrNilArgument},
	{"nil *bigtable.Table", nil, func(x *badFixture) error { return errOf(ttl.NewTable((*bigtable.Table)(nil), x.families)) }, ttl.ErrNilArgument},
	{"no managed family", nil, func(x *badFixture) error { return errOf(ttl.NewTable(x.api, nil)) }, ttl.ErrInvalidStrategy},
	{"empty family name", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"": ttl.OneSecond()}))
	}, ttl.ErrInvalidStrategy},
	{"bad family name", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"a:b": ttl.OneSecond()}))
	}, ttl.ErrInvalidStrategy},
	{"nil strategy", nil, func(x *badFixture) error { return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"sess": nil})) }, ttl.ErrInvalidStrategy},
	{"zero default", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(0)}))
	}, ttl.ErrInvalidStrategy},
	{"sub-millisecond default", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(1500 * time.Microsecond)}))
	}, ttl.ErrInvalidStrategy},
	{"no versions", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"rev": ttl.SequenceNumbers(0)}))
	}, ttl.ErrInvalidStrategy},
	{"counter of sequence numbers", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"rev": ttl.Counter(ttl.SequenceNumbers(3))}))
	}, ttl.ErrInvalidStrategy},
	{"grace of sequence numbers", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"rev": ttl.Grace(ttl.SequenceNumbers(3), time.Hour)}))
	}, ttl.ErrInvalidStrategy},
	{"grace of a fraction of a second", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"sess": ttl.Grace(ttl.OneSecond(), 1500*time.Millisecond)}))
	}, ttl.ErrInvalidStrategy},
	{"nil option", nil, func(x *badFixture) error { return errOf(ttl.NewTable(x.api, x.families, nil)) }, ttl.ErrInvalidOption},
	{"nil clock", nil, func(x *badFixture) error { return errOf(ttl.NewTable(x.api, x.families, ttl.WithClock(nil))) }, ttl.ErrInvalidOption},
	{"nil meter provider", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, x.families, ttl.WithMeterProvider(nil)))
	}, ttl.ErrInvalidOption},
	{"negative read margin", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, x.families, ttl.WithReadMargin(-time.Second)))
	}, ttl.ErrInvalidOption},
	{"managed family declared as other", nil, func(x *badFixture) error { return errOf(ttl.NewTable(x.api, x.families, ttl.OtherFamilies("sess"))) }, ttl.ErrInvalidOption},
	{"other family named twice", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, x.families, ttl.OtherFamilies("meta", "meta")))
	}, ttl.ErrInvalidOption},
	{"bad other family name", nil, func(x *badFixture) error { return errOf(ttl.NewTable(x.api, x.families, ttl.OtherFamilies("-meta"))) }, ttl.ErrInvalidOption},

	{"move from a strategy to itself", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"clicks": ttl.Move{From: ttl.DefaultExpiration(time.Hour), To: ttl.DefaultExpiration(2 * time.Hour), Start: now.Add(time.Hour)}}))
	}, ttl.ErrInvalidStrategy},
	{"move without a start", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"sess": ttl.Move{To: ttl.OneSecond()}}))
	}, ttl.ErrInvalidStrategy},
	{"move of a counter family", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"hits": ttl.Move{From: ttl.Counter(ttl.DefaultExpiration(time.Hour)), To: ttl.Counter(ttl.OneSecond()), Start: now.Add(time.Hour)}}))
	}, ttl.ErrInvalidStrategy},
	{"move with a negative skew", nil, func(x *badFixture) error {
		return errOf(ttl.NewTable(x.api, map[string]ttl.Strategy{"sess": ttl.Move{To: ttl.OneSecond(), Start: now.Add(time.Hour), Skew: -time.Second}}))
	}, ttl.ErrInvalidStrategy},

	{"nil mutation", nil, func(x *badFixture) error { return x.tbl.Apply(x.ctx, "r", nil) }, ttl.ErrInvalidMutation},
	{"empty mutation", nil, func(x *badFixture) error { return x.tbl.Apply(x.ctx, "r", ttl.NewMutation()) }, ttl.ErrInvalidMutation},
	{"conditional without changes", nil, func(x *badFixture) error {
		return x.tbl.Apply(x.ctx, "r", ttl.NewCondMutation(nil, nil, ttl.NewMutation()))
	}, ttl.ErrInvalidMutation},
	{"nested conditional", nil, func(x *badFixture) error {
		return x.tbl.Apply(x.ctx, "r", ttl.NewCondMutation(nil, ttl.NewCondMutation(nil, x.good, nil), nil))
	}, ttl.ErrInvalidMutation},
	{"bad change in a branch", nil, func(x *badFixture) error {
		return x.tbl.Apply(x.ctx, "r", ttl.NewCondMutation(nil, x.good, testkit.Set("sess", "c", "v", ttl.For(-time.Hour))))
	}, ttl.ErrExpired},
	{"conditional in bulk", nil, func(x *badFixture) error {
		return firstErr(x.tbl.ApplyBulk(x.ctx, []string{"r"}, []*ttl.Mutation{ttl.NewCondMutation(nil, x.good, nil)}))
	}, ttl.ErrInvalidMutation},
	{"bad row in bulk", nil, func(x *badFixture) error {
		return firstErr(x.tbl.ApplyBulk(x.ctx, []string{"a", "b", "c"}, []*ttl.Mutation{x.good, testkit.Set("rev", "c", "v", ttl.Version(-1)), x.good}))
	}, ttl.ErrOutOfRange},
	{"rows and mutations differ", nil, func(x *badFixture) error {
		return firstErr(x.tbl.ApplyBulk(x.ctx, []string{"a", "b"}, []*ttl.Mutation{x.good}))
	}, ttl.ErrInvalidMutation},

	{"bigtable.RowFilter", nil, func(x *badFixture) error {
		return errOf(x.tbl.ReadRow(x.ctx, "r", bigtable.RowFilter(bigtable.PassAllFilter())))
	}, ttl.ErrInvalidOption},
	{"two RowFilters", nil, func(x *badFixture) error {
		return errOf(x.tbl.ReadRow(x.ctx, "r", ttl.RowFilter(bigtable.LatestNFilter(1)), ttl.RowFilter(bigtable.LatestNFilter(2))))
	}, ttl.ErrInvalidOption},
	{"RowFilter(nil)", nil, func(x *badFixture) error { return errOf(x.tbl.ReadRow(x.ctx, "r", ttl.RowFilter(nil))) }, ttl.ErrInvalidOption},
	{"nil read option", nil, func(x *badFixture) error { return errOf(x.tbl.ReadRow(x.ctx, "r", nil)) }, ttl.ErrInvalidOption},
	{"write times not recorded", nil, func(x *badFixture) error {
		return x.tbl.ReadRows(x.ctx, bigtable.InfiniteRange(""), func(bigtable.Row) bool { return true }, ttl.WithWriteTimes())
	}, ttl.ErrInvalidOption},
	{"KeepAlive(0)", nil, func(x *badFixture) error { return errOf(x.tbl.ReadRow(x.ctx, "r", ttl.KeepAlive(0))) }, ttl.ErrInvalidOption},
	{"two KeepAlives", nil, func(x *badFixture) error {
		return errOf(x.tbl.ReadRow(x.ctx, "r", ttl.KeepAlive(time.Minute), ttl.KeepAlive(time.Hour)))
	}, ttl.ErrInvalidOption},

	{"Touch under SequenceNumbers", nil, func(x *badFixture) error { return errOf(x.tbl.Touch(x.ctx, "r", "rev", "c", ttl.Version(1))) }, ttl.ErrLifetime},
	{"Touch in a family without a strategy", nil, func(x *badFixture) error {
		return errOf(x.tbl.Touch(x.ctx, "r", "meta", "c", ttl.Default))
	}, ttl.ErrLifetime},
	{"Touch in an undeclared family", []ttl.Option{ttl.OtherFamilies()}, func(x *badFixture) error {
		return errOf(x.tbl.Touch(x.ctx, "r", "meta", "c", ttl.Default))
	}, ttl.ErrUnknownFamily},
	{"Touch with an expired lifetime", nil, func(x *badFixture) error {
		return errOf(x.tbl.Touch(x.ctx, "r", "sess", "c", ttl.For(-time.Hour)))
	}, ttl.ErrExpired},
	{"Touch of a reserved column", []ttl.Option{ttl.RecordWriteTime()}, func(x *badFixture) error {
		return errOf(x.tbl.Touch(x.ctx, "r", "clicks", "\xff\xffn", ttl.Default))
	}, ttl.ErrReservedColumn},

	{"read-modify-write under OneSecond", nil, func(x *badFixture) error {
		return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", increment("sess", "n")))
	}, ttl.ErrServerTimestamp},
	{"read-modify-write under SequenceNumbers", nil, func(x *badFixture) error { return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", increment("rev", "n"))) }, ttl.ErrServerTimestamp},
	{"read-modify-write in an undeclared family", []ttl.Option{ttl.OtherFamilies()}, func(x *badFixture) error {
		return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", increment("meta", "n")))
	}, ttl.ErrUnknownFamily},
	{"read-modify-write of a reserved column", []ttl.Option{ttl.RecordWriteTime()}, func(x *badFixture) error {
		return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", increment("clicks", "\xff\xffn")))
	}, ttl.ErrReservedColumn},
	{"read-modify-write in a counter family", nil, func(x *badFixture) error {
		return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", increment("hits", "n")))
	}, ttl.ErrCounter},
	{"counter read of a plain family", nil, func(x *badFixture) error {
		return errOf(x.tbl.ReadCounter(x.ctx, "r", "sess", "n", ttl.Window{Size: time.Minute, Keep: time.Hour}))
	}, ttl.ErrCounter},
	{"counter read of an undeclared family", nil, func(x *badFixture) error {
		return errOf(x.tbl.SumCounter(x.ctx, "r", "hitz", "n", ttl.Window{Size: time.Minute, Keep: time.Hour}, 2))
	}, ttl.ErrUnknownFamily},
	{"counter read of a declared other family", []ttl.Option{ttl.OtherFamilies("meta")}, func(x *badFixture) error {
		return errOf(x.tbl.ReadCounter(x.ctx, "r", "meta", "n", ttl.Window{Size: time.Minute, Keep: time.Hour}))
	}, ttl.ErrCounter},
	{"sum over no windows", nil, func(x *badFixture) error {
		return errOf(x.tbl.SumCounter(x.ctx, "r", "hits", "n", ttl.Window{Size: time.Minute, Keep: time.Hour}, 0))
	}, ttl.ErrInvalidOption},
	{"sum over more windows than kept", nil, func(x *badFixture) error {
		return errOf(x.tbl.SumCounter(x.ctx, "r", "hits", "n", ttl.Window{Size: time.Minute, Keep: time.Hour}, 120))
	}, ttl.ErrInvalidOption},
	{"empty read-modify-write", nil, func(x *badFixture) error {
		return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", ttl.NewReadModifyWrite()))
	}, ttl.ErrInvalidMutation},
	{"nil read-modify-write", nil, func(x *badFixture) error { return errOf(x.tbl.ApplyReadModifyWrite(x.ctx, "r", nil)) }, ttl.ErrInvalidMutation},

	{"clock before 1970", []ttl.Option{ttl.WithClock(func() time.Time { return time.Unix(-1, 0) })}, func(x *badFixture) error {
		return x.tbl.Apply(x.ctx, "r", testkit.Set("meta", "c", "v", ttl.Default))
	}, ttl.ErrOutOfRange},
	{"nil context", nil, func(x *badFixture) error { return x.tbl.Apply(nil, "r", x.good) }, ttl.ErrNilArgument}, //lint:ignore SA1012 a nil context is the input under test
	{"ApplyRow with no changes", nil, func(x *badFixture) error { return x.tbl.ApplyRow(x.ctx, "r", func(ttl.RowWriter) {}) }, ttl.ErrInvalidMutation},
	{"ApplyRow with a nil function", nil, func(x *badFixture) error { return x.tbl.ApplyRow(x.ctx, "r", nil) }, ttl.ErrNilArgument},
	{"ApplyRow with a bad change", nil, func(x *badFixture) error {
		return x.tbl.ApplyRow(x.ctx, "r", func(r ttl.RowWriter) { r.Set("sess", "c", nil, ttl.For(-time.Second)) })
	}, ttl.ErrExpired},
	{"ApplyBatch row with no changes", nil, func(x *badFixture) error {
		return firstErr(x.tbl.ApplyBatch(x.ctx, []string{"r"}, func(int, ttl.RowWriter) {}))
	}, ttl.ErrInvalidMutation},
	{"ApplyBatch with a nil function", nil, func(x *badFixture) error { return firstErr(x.tbl.ApplyBatch(x.ctx, []string{"r"}, nil)) }, ttl.ErrNilArgument},
	{"nil row set", nil, func(x *badFixture) error { return x.tbl.ReadRows(x.ctx, nil, func(bigtable.Row) bool { return true }) }, ttl.ErrNilArgument},
	{"nil callback", nil, func(x *badFixture) error { return x.tbl.ReadRows(x.ctx, bigtable.InfiniteRange(""), nil) }, ttl.ErrNilArgument},
}

// errOf returns the error of a call's results.
func errOf[T any](_ T, err error) error { return err }

// firstErr returns ApplyBulk's error, or the first of its per-row errors.
func firstErr(errs []error, err error) error {
	if err != nil {
		return err
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func increment(family, column string) *ttl.ReadModifyWrite {
	m := ttl.NewReadModifyWrite()
	m.Increment(family, column, 1)
	return m
}

// sentinelNames names the package's sentinel errors, for docs/errors.md.
var sentinelNames = map[error]string{
	ttl.ErrExpired: "ErrExpired", ttl.ErrOutOfRange: "ErrOutOfRange", ttl.ErrLifetime: "ErrLifetime",
	ttl.ErrInvalidStrategy: "ErrInvalidStrategy", ttl.ErrInvalidOption: "ErrInvalidOption",
	ttl.ErrUnknownFamily: "ErrUnknownFamily", ttl.ErrInvalidMutation: "ErrInvalidMutation",
	ttl.ErrReservedColumn: "ErrReservedColumn", ttl.ErrServerTimestamp: "ErrServerTimestamp",
	ttl.ErrNilArgument: "ErrNilArgument",
	ttl.ErrConflict:    "ErrConflict", ttl.ErrRenewal: "ErrRenewal", ttl.ErrCounter: "ErrCounter",
	ttl.ErrTransactionNotAllowed: "ErrTransactionNotAllowed",
}

// sentinelOf names the one sentinel err wraps, or describes what is wrong.
func sentinelOf(err error) string {
	var names []string
	for s, name := range sentinelNames {
		if errors.Is(err, s) {
			names = append(names, name)
		}
	}
	if len(names) != 1 {
		return fmt.Sprintf("%v (wraps %q)", err, names)
	}
	return "ttl." + names[0]
}

// outcome is what one bad input did, as docs/errors.md reports it.
type outcome struct {
	name, input, err, written string
}

// badTable makes the fixture's table on a fresh emulator table of e.
func badTable(t *testing.T, e *emulator.Emulator, name string, opts []ttl.Option) (*badFixture, *testkit.Recorder, *bigtable.Table) {
	t.Helper()
	raw := e.TableForTest(t, name, map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "rev": nil, "meta": nil, "hits": nil})
	rec := &testkit.Recorder{TableAPI: raw}
	x := &badFixture{
		ctx:      context.Background(),
		api:      rec,
		families: map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(48 * time.Hour), "rev": ttl.SequenceNumbers(3), "hits": ttl.Counter(ttl.OneSecond())},
		good:     testkit.Set("sess", "c", "v", ttl.For(time.Hour)),
	}
	tbl, err := ttl.NewTable(rec, x.families, append([]ttl.Option{ttl.WithClock(testkit.NewClock(now).Now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	x.tbl = tbl
	return x, rec, raw
}

// leftBehind describes what a bad input left in the table, and what it sent.
func leftBehind(t *testing.T, rec *testkit.Recorder, raw *bigtable.Table) string {
	t.Helper()
	ctx := context.Background()
	var rows []string
	if err := raw.ReadRows(ctx, bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		rows = append(rows, r.Key())
		return true
	}); err != nil {
		t.Fatal(err)
	}
	switch {
	case len(rows) == 0 && len(rec.Calls()) == 0:
		return "nothing (no request sent)"
	case len(rows) == 0:
		return fmt.Sprintf("nothing (sent %s)", strings.Join(rec.Calls(), ", "))
	}
	return fmt.Sprintf("only the good rows: %s", strings.Join(rows, ", "))
}

// TestBadInputs runs every refused input, checks that it gets its
// sentinel and writes nothing (in bulk: nothing of the bad row), and
// checks docs/errors.md's table of them.
func TestBadInputs(t *testing.T) {
	ctx := context.Background()
	mutSrc := sourceOf(t, "badmutations_test.go", "badMutations")
	callSrc := sourceOf(t, "badinputs_test.go", "badCalls")
	if len(mutSrc) != len(badMutations) || len(callSrc) != len(badCalls) {
		t.Fatalf("parsed %d badMutations and %d badCalls, want %d and %d", len(mutSrc), len(callSrc), len(badMutations), len(badCalls))
	}
	e := emulator.StartForTest(t)
	var out []outcome
	for i, tt := range badMutations {
		t.Run(tt.name, func(t *testing.T) {
			x, rec, raw := badTable(t, e, fmt.Sprintf("m%d", i), tt.opts)
			m := ttl.NewMutation()
			m.Set("sess", "good", []byte("x"), ttl.For(time.Hour)) // as TestBadMutationsWriteNothing does
			tt.mutate(m)
			err := x.tbl.Apply(ctx, "r", m)
			if !errors.Is(err, tt.want) {
				t.Errorf("Apply: %v, want %v", err, tt.want)
			}
			src := mutSrc[i]
			if src.want != "ttl."+sentinelNames[tt.want] || sentinelOf(err) != src.want {
				t.Errorf("error %s; the source says %s", sentinelOf(err), src.want)
			}
			w := leftBehind(t, rec, raw)
			if w != "nothing (no request sent)" {
				t.Errorf("written: %s", w)
			}
			input := "`" + src.input + "`"
			if src.opts != "" {
				input += " with `" + src.opts + "`"
			}
			out = append(out, outcome{tt.name, input, "`" + sentinelOf(err) + "`", w})
		})
	}
	for i, tt := range badCalls {
		t.Run(tt.name, func(t *testing.T) {
			x, rec, raw := badTable(t, e, fmt.Sprintf("c%d", i), tt.opts)
			err := tt.call(x)
			src := callSrc[i]
			if !errors.Is(err, tt.want) || sentinelOf(err) != src.want {
				t.Errorf("%s: %v, want %s", src.input, err, src.want)
			}
			w := leftBehind(t, rec, raw)
			if want := "nothing (no request sent)"; tt.name == "bad row in bulk" {
				want = "only the good rows: a, c"
				if w != want {
					t.Errorf("written: %s, want %s", w, want)
				}
			} else if w != want {
				t.Errorf("written: %s", w)
			}
			input := "`" + src.input + "`"
			if src.opts != "" {
				input += " with `" + src.opts + "`"
			}
			out = append(out, outcome{tt.name, input, "`" + sentinelOf(err) + "`", w})
		})
	}
	// The foreign strategy, refused at run time before Strategy was
	// sealed, keeps its place after the nil one.
	for i, o := range out {
		if o.name == "nil strategy" {
			out = append(out[:i+1], append([]outcome{sealedOutcome(t)}, out[i+1:]...)...)
			break
		}
	}
	if t.Failed() {
		return
	}
	checkDoc(t, renderBadInputs(out))
}

func renderBadInputs(out []outcome) string {
	var b strings.Builder
	b.WriteString(docBegin + "\n")
	b.WriteString("<!-- Generated by TestBadInputs (tests/inputs/badinputs_test.go) from badMutations in tests/inputs/badmutations_test.go and badCalls in tests/inputs/badinputs_test.go. Do not edit: run UPDATE_DOCS=1 go test -run TestBadInputs ./tests/inputs -->\n\n")
	b.WriteString("Every input below is refused with the sentinel error shown (test for it with `errors.Is`; the message names the family, column or value at fault) and writes nothing: a mutation with any bad change is refused whole before anything is sent, and in `ApplyBulk` only the bad row is refused. The tests run each input on a table with the families `sess` (`OneSecond()`), `clicks` (`DefaultExpiration(48h)`), `rev` (`SequenceNumbers(3)`), `hits` (`Counter(OneSecond())`) and `meta` (no strategy) at a fixed clock reading `base`; `m` already holds a valid `Set`, `good` is a valid mutation, `set(family, column, value, life)` a mutation of one `Set`, `increment(family, column)` a read-modify-write of one `Increment`, `families` the table's strategies and `api` the `bigtable.TableAPI` it wraps. The row \"strategy from outside the package\" is refused by the compiler: `Strategy` is sealed, and `foreign{}`, a type outside the package with every exported method of `Strategy`, does not implement it.\n\n")
	b.WriteString("| case | input | error | written |\n|---|---|---|---|\n")
	for _, o := range out {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdCell(o.name), mdCell(o.input), mdCell(o.err), mdCell(o.written))
	}
	b.WriteString(docEnd)
	return b.String()
}

// mdCell escapes text for a markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// errorsGuide is the guide whose table of refused inputs the tests
// generate, from this package's directory.
const errorsGuide = "../../docs/errors.md"

// checkDoc compares the guide's section with want, or rewrites it when
// UPDATE_DOCS is set.
func checkDoc(t *testing.T, want string) {
	t.Helper()
	readme, err := os.ReadFile(errorsGuide)
	if err != nil && !(os.IsNotExist(err) && os.Getenv("UPDATE_DOCS") != "") {
		t.Fatal(err)
	}
	begin, end := bytes.Index(readme, []byte(docBegin)), bytes.Index(readme, []byte(docEnd))
	var got []byte
	if begin >= 0 && end > begin {
		got = readme[begin : end+len(docEnd)]
	}
	if string(got) == want {
		return
	}
	if os.Getenv("UPDATE_DOCS") == "" {
		t.Fatalf("%s's table of refused inputs differs from the tests; run UPDATE_DOCS=1 go test -run TestBadInputs ./tests/inputs (section %s … %s)", errorsGuide, docBegin, docEnd)
	}
	var updated []byte
	if got == nil {
		if len(readme) > 0 {
			readme = append(readme, '\n')
		}
		updated = append(append(readme, want...), '\n')
	} else {
		updated = append(append(append([]byte(nil), readme[:begin]...), want...), readme[end+len(docEnd):]...)
	}
	if err := os.WriteFile(errorsGuide, updated, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Log(errorsGuide + " updated")
}

// source is an entry of a list of bad inputs as its test spells it.
type source struct {
	input, opts, want string
}

// sourceOf parses file and returns, for each element of the list var, the
// Go source of its input (the body of its func: the mutation's change,
// or the call, without the fixture's "x."), its options and its sentinel.
func sourceOf(t *testing.T, file, list string) []source {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	print := func(n ast.Node) string {
		var b bytes.Buffer
		if err := format.Node(&b, fset, n); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	var out []source
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != list {
			return true
		}
		for _, el := range spec.Values[0].(*ast.CompositeLit).Elts {
			fields := el.(*ast.CompositeLit).Elts
			var s source
			for _, field := range fields {
				switch v := field.(type) {
				case *ast.CompositeLit: // []ttl.Option{...}
					var opts []string
					for _, o := range v.Elts {
						opts = append(opts, print(o))
					}
					s.opts = strings.Join(opts, ", ")
				case *ast.FuncLit:
					s.input = inputOf(print, v.Body.List[len(v.Body.List)-1])
				case *ast.SelectorExpr: // ttl.ErrX
					s.want = print(v)
				}
			}
			out = append(out, s)
		}
		return false
	})
	return out
}

// inputOf prints the statement that makes a bad input: a change, or the
// call that returns its error, unwrapped from errOf and firstErr.
func inputOf(print func(ast.Node) string, stmt ast.Stmt) string {
	var n ast.Node = stmt
	if ret, ok := stmt.(*ast.ReturnStmt); ok {
		n = ret.Results[0]
		if call, ok := n.(*ast.CallExpr); ok {
			if id, ok := call.Fun.(*ast.Ident); ok && (id.Name == "errOf" || id.Name == "firstErr") {
				n = call.Args[0]
			}
		}
	}
	return fixtureField.ReplaceAllString(print(n), "")
}

// fixtureField matches the "x." of a badFixture field.
var fixtureField = regexp.MustCompile(`\bx\.`)
