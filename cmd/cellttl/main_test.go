package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
)

// startEmulator starts an emulator and points BIGTABLE_EMULATOR_HOST at it
// for the test, as an operator would, and creates its table t with the
// families, nil meaning no GC.
func startEmulator(t *testing.T, families map[string]bigtable.GCPolicy) (*emulator.Emulator, *bigtable.Table) {
	t.Helper()
	e := emulator.StartForTest(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", e.Addr)
	return e, e.TableForTest(t, "t", families)
}

// put writes one raw cell.
func put(t *testing.T, raw *bigtable.Table, row, family, column string, ts time.Time) {
	t.Helper()
	ctx := context.Background()
	m := bigtable.NewMutation()
	m.Set(family, column, bigtable.Time(ts), []byte("v"))
	require.NoError(t, raw.Apply(ctx, row, m))
}

// policies returns each family's policy as bigtable prints it.
func policies(t *testing.T, admin *bigtable.AdminClient) map[string]string {
	t.Helper()
	ctx := context.Background()
	info, err := admin.TableInfo(ctx, "t")
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range info.FamilyInfos {
		out[f.Name] = f.FullGCPolicy.String()
	}
	return out
}

// cellttl runs the command line in process.
func cellttl(args ...string) (stdout, stderr string, code int) {
	var out, errs bytes.Buffer
	code = execute(args, &out, &errs)
	return out.String(), errs.String(), code
}

// on is the common flags for table t of the emulator.
var on = []string{"-project", emulator.Project, "-instance", emulator.Instance, "-table", "t"}

func with(cmd string, args ...string) []string {
	return append(append([]string{cmd}, on...), args...)
}

// TestCommandLine checks help, and that every bad command line exits 2
// with a message and touches nothing.
func TestCommandLine(t *testing.T) {
	stdout, stderr, code := cellttl()
	assert.Equal(t, exitUsage, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "Usage:")

	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		stdout, _, code = cellttl(args...)
		assert.Equal(t, exitOK, code, args)
		assert.Equal(t, usage, stdout, args)
	}
	for cmd, flags := range map[string][]string{
		"check":   {"-project", "-instance", "-table", "-family", "-timeout"},
		"ensure":  {"-project", "-instance", "-table", "-family", "-timeout", "-apply", "-allow-data-loss", "-ignore-warnings"},
		"inspect": {"-project", "-instance", "-table", "-family", "-timeout", "-other", "-at", "-write-times", "-read-margin"},
	} {
		help, _, code := cellttl("help", cmd)
		assert.Equal(t, exitOK, code)
		for _, f := range flags {
			assert.Regexp(t, "\n  "+f+"[ \n]", help, "help %s: flag %s", cmd, f)
		}
		stdout, stderr, code := cellttl(cmd, "-h")
		assert.Equal(t, exitOK, code)
		assert.Equal(t, help, stdout, "%s -h", cmd)
		assert.Empty(t, stderr)
	}

	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"frob"}, `cellttl: unknown command "frob"`},
		{[]string{"help", "frob"}, `unknown command "frob"`},
		{[]string{"check"}, "cellttl check: missing -project, -instance, -table, -family"},
		{with("check"), "missing -family"},
		{with("check", "-family", "clicks"), `invalid value "clicks" for flag -family: want NAME=onesecond`},
		{with("check", "-family", "clicks=forever"), `family "clicks": strategy "forever"`},
		{with("check", "-family", "clicks=default"), `strategy "default"`},
		{with("check", "-family", "clicks=default:0s"), "default:0s: want a positive duration"},
		{with("check", "-family", "clicks=default:xd"), "default:xd: want a positive duration"},
		{with("check", "-family", "rev=seqnum:0"), "seqnum:0: want a positive number of versions"},
		{with("check", "-family", "a=onesecond", "-family", "a=seqnum:1"), `family "a" given twice`},
		{with("check", "-family", "a=onesecond", "row"), `unexpected argument "row"`},
		{with("ensure", "-family", "a=onesecond", "-frob"), "flag provided but not defined: -frob"},
		{with("inspect", "-family", "a=onesecond"), "missing ROW"},
		{with("inspect", "-family", "a=onesecond", "r1", "r2"), `unexpected argument "r2" after ROW`},
		{with("inspect", "-family", "a=onesecond", "-at", "tomorrow", "r"), "want a time such as 2030-04-30T09:00:00Z"},
	} {
		stdout, stderr, code := cellttl(tt.args...)
		assert.Equal(t, exitUsage, code, tt.args)
		assert.Empty(t, stdout, tt.args)
		assert.Contains(t, stderr, tt.msg, tt.args)
	}
}

// TestStrategyRefusedByLibrary checks that what the library refuses is a
// bad command line too.
func TestStrategyRefusedByLibrary(t *testing.T) {
	startEmulator(t, map[string]bigtable.GCPolicy{"a": nil})
	_, stderr, code := cellttl(with("check", "-family", "a=default:1500ms")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "GC ages in whole seconds")
	_, stderr, code = cellttl(with("inspect", "-family", "a=onesecond", "-other", "a", "r")...)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, `family "a" has a strategy`)
}

// TestCheck checks the table check prints and its exit statuses.
func TestCheck(t *testing.T) {
	startEmulator(t, map[string]bigtable.GCPolicy{
		"clicks": bigtable.MaxAgePolicy(48 * time.Hour),
		"sess":   nil,
		"rev":    bigtable.UnionPolicy(bigtable.MaxVersionsPolicy(3), bigtable.MaxAgePolicy(24*time.Hour)),
	})
	stdout, stderr, code := cellttl(with("check", "-family", "clicks=default:2d", "-family", "sess=onesecond", "-family", "rev=seqnum:3", "-family", "gone=onesecond")...)
	assert.Equal(t, exitMismatch, code)
	assert.Equal(t, `table "t"
FAMILY  STRATEGY                    FOUND                       WANT           STATUS
clicks  DefaultExpiration(48h0m0s)  maxage=2d                   maxage=2d      ok
gone    OneSecond()                 missing                     maxage=1s      missing
rev     SequenceNumbers(3)          maxversions=3 or maxage=1d  maxversions=3  mismatch
sess    OneSecond()                 never                       maxage=1s      mismatch
`, stdout)
	// Each fault once (issue 28): the table above shows each policy.
	assert.Equal(t, `cellttl check: table "t" has no family "gone"
cellttl check: table "t": family "rev" (SequenceNumbers(3)): found maxversions=3 or maxage=1d, want maxversions=3; "cellttl ensure" shows what it would change
cellttl check: table "t": family "sess" (OneSecond()): found never, want maxage=1s; "cellttl ensure" shows what it would change
`, stderr)

	stdout, stderr, code = cellttl(with("check", "-family", "clicks=default:48h")...)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "clicks  DefaultExpiration(48h0m0s)  maxage=2d  maxage=2d  ok")

	stdout, stderr, code = cellttl("check", "-project", emulator.Project, "-instance", emulator.Instance, "-table", "nope", "-family", "a=onesecond")
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "a       OneSecond()  missing  maxage=1s  missing")
	assert.Equal(t, `cellttl check: policy: table not found: table "nope" does not exist on the emulator at BIGTABLE_EMULATOR_HOST=`+
		os.Getenv("BIGTABLE_EMULATOR_HOST")+`; "cellttl ensure -create" creates it
`, stderr)

	// One misspelling, one line.
	_, stderr, code = cellttl(with("check", "-family", "click=default:2d")...)
	assert.Equal(t, exitMismatch, code)
	assert.Equal(t, `cellttl check: table "t" has no family "click" (did you mean "clicks"?)
`, stderr)
}

// TestCommandFails checks that a Bigtable that cannot be reached exits 1.
func TestCommandFails(t *testing.T) {
	l, err := net.Listen("tcp", "localhost:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
	for _, cmd := range []string{"check", "ensure", "inspect"} {
		args := with(cmd, "-family", "a=onesecond", "-timeout", "300ms")
		if cmd == "inspect" {
			args = append(args, "row")
		}
		_, stderr, code := cellttl(args...)
		assert.Equal(t, exitFailed, code, cmd)
		assert.Contains(t, stderr, "cellttl "+cmd+": ", cmd)
	}
}

// TestEnsure migrates a table holding real timestamps, on the real clock,
// as docs/families.md does: refused while cells would expire at once, a dry run
// by default, then applied.
func TestEnsure(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"clicks": nil, "meta": nil})
	now := time.Now()
	put(t, raw, "u1", "clicks", "n", now.Add(-time.Hour))
	put(t, raw, "u2", "clicks", "n", now.Add(-5*24*time.Hour))
	put(t, raw, "u2", "meta", "src", now.Add(-50*24*time.Hour))
	before := policies(t, e.Admin)

	for _, apply := range []string{"-timeout=1m", "-apply"} {
		stdout, stderr, code := cellttl(with("ensure", "-family", "clicks=default:48h", "-family", "sess=onesecond", "-create", apply)...)
		assert.Equal(t, exitMismatch, code)
		assert.Contains(t, stdout, "clicks  DefaultExpiration(48h0m0s)  never    maxage=2d  refused       1\n")
		assert.Contains(t, stdout, "sess    OneSecond()                 missing  maxage=1s  would create  -\n")
		assert.Contains(t, stdout, "clicks: 1 row holds cells stamped up to ")
		assert.Regexp(t, `\n  scan: (\d+) shards, (\d+) reads, 2 rows and 3 cells seen, 1 cell returned\n`, stdout)
		assert.Contains(t, stderr, "refused, nothing changed; run again with -allow-data-loss")
		assert.Equal(t, before, policies(t, e.Admin))
	}

	stdout, stderr, code := cellttl(with("ensure", "-family", "clicks=default:30d", "-family", "sess=onesecond", "-create")...)
	assert.Equal(t, exitOK, code)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, ": dry run, nothing changed; would make 2 changes\n")
	assert.Contains(t, stdout, "clicks  DefaultExpiration(720h0m0s)  never    maxage=30d  would change  0\n")
	assert.True(t, strings.HasSuffix(stdout, "dry run: nothing changed; run again with -apply to make these changes\n"), stdout)
	assert.Equal(t, before, policies(t, e.Admin))

	stdout, _, code = cellttl(with("ensure", "-family", "clicks=default:30d", "-family", "sess=onesecond", "-create", "-apply")...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, ": 2 changes made\n")
	assert.Equal(t, map[string]string{"clicks": "age() > 30d", "meta": "", "sess": "age() > 1000000"}, policies(t, e.Admin))

	stdout, _, code = cellttl(with("ensure", "-family", "clicks=default:30d", "-family", "sess=onesecond")...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, ": every family matches its strategy, nothing to change\n")
	assert.NotContains(t, stdout, "-apply")
	_, _, code = cellttl(with("check", "-family", "clicks=default:30d", "-family", "sess=onesecond")...)
	assert.Equal(t, exitOK, code)

	stdout, _, code = cellttl(with("ensure", "-family", "clicks=default:2d", "-apply", "-allow-data-loss")...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "clicks  DefaultExpiration(48h0m0s)  maxage=30d  maxage=2d  changed, data lost  2\n")
	assert.Contains(t, stdout, "clicks: 1 row holds live cells whose expiries move 28d earlier under DefaultExpiration(48h0m0s), written under maxage=30d as a default (kept by a grace on a default of 2d, none moves)\n")
	assert.Equal(t, "age() > 2d", policies(t, e.Admin)["clicks"])
}

// TestInspect checks the cells of a row as a person reads them, at a fixed
// instant: expiries, time and versions left, what a read returns and why
// not.
func TestInspect(t *testing.T) {
	ctx := context.Background()
	_, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil, "clicks": nil, "rev": nil, "meta": nil, "junk": nil})
	base := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	fams := map[string]ttl.Strategy{"sess": ttl.OneSecond(), "clicks": ttl.DefaultExpiration(48 * time.Hour), "rev": ttl.SequenceNumbers(2)}
	tbl, err := ttl.NewTable(raw, fams, ttl.WithClock(func() time.Time { return base }), ttl.OtherFamilies("meta", "junk"), ttl.RecordWriteTime())
	require.NoError(t, err)
	m := ttl.NewMutation()
	m.Set("sess", "token", []byte("abc"), ttl.For(time.Hour))
	m.Set("sess", "old", []byte("x"), ttl.For(time.Minute))
	m.Set("sess", "keep", []byte("x"), ttl.Forever)
	m.Set("clicks", "n", []byte("7"), ttl.Default)
	for seq := int64(1); seq <= 3; seq++ {
		m.Set("rev", "body", []byte{byte('a' + seq)}, ttl.Version(seq))
	}
	m.Set("meta", "src", []byte("web app"), ttl.Default)
	m.Set("junk", "j", []byte{0, 1, 2}, ttl.Default)
	require.NoError(t, tbl.Apply(ctx, "u1", m))

	// Two minutes on: the minute-long session cell has expired.
	args := with("inspect", "-family", "sess=onesecond", "-family", "clicks=default:48h", "-family", "rev=seqnum:2",
		"-at", "2030-04-30T09:02:00Z", "u1", "-other", "meta", "-write-times")
	stdout, stderr, code := cellttl(args...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, `row "u1" of table "t" at 2030-04-30T09:02:00.000Z
families: clicks DefaultExpiration(48h0m0s), rev SequenceNumbers(2), sess OneSecond(); other families: meta; undeclared ones not returned
FAMILY  COLUMN              TIMESTAMP                   EXPIRES                   LEFT              READ                      WRITTEN                   VALUE
clicks  n                   2030-04-30T09:00:00.000Z    2030-05-02T09:00:00.000Z  1d23h58m0s        yes                       2030-04-30T09:00:00.000Z  7
clicks  "\xff\xffwt:n"      2030-04-30T09:00:00.000Z    2030-05-02T09:00:00.000Z  1d23h58m0s        no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
junk    j                   2030-04-30T09:00:00.000Z    -                         -                 no: family not declared   -                         "\x00\x01\x02"
meta    src                 2030-04-30T09:00:00.000Z    -                         -                 yes                       -                         "web app"
rev     body                seq 3                       -                         2 versions        yes                       2030-04-30T09:00:00.000Z  d
rev     body                seq 2                       -                         1 version         yes                       2030-04-30T09:00:00.000Z  c
rev     body                seq 1                       -                         superseded        no: superseded            -                         b
rev     "\xff\xffwt:body"   seq 3                       -                         2 versions        no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
rev     "\xff\xffwt:body"   seq 2                       -                         1 version         no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
rev     "\xff\xffwt:body"   seq 1                       -                         superseded        no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
sess    keep                294247-01-10T04:00:54.775Z  never                     forever           yes                       2030-04-30T09:00:00.000Z  x
sess    old                 2030-04-30T09:01:00.000Z    2030-04-30T09:01:00.000Z  expired 1m0s ago  no: expired               -                         x
sess    token               2030-04-30T10:00:00.000Z    2030-04-30T10:00:00.000Z  58m0s             yes                       2030-04-30T09:00:00.000Z  abc
sess    "\xff\xffwt:keep"   294247-01-10T04:00:54.775Z  never                     forever           no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
sess    "\xff\xffwt:old"    2030-04-30T09:01:00.000Z    2030-04-30T09:01:00.000Z  expired 1m0s ago  no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
sess    "\xff\xffwt:token"  2030-04-30T10:00:00.000Z    2030-04-30T10:00:00.000Z  58m0s             no: write-time companion  -                         "\x00\x06\xc3w\xfe\x95\x84\x00"
`, stdout)

	// Without -other, every other family is passed through; without
	// -write-times, companions are cells like any other.
	stdout, _, code = cellttl(with("inspect", "-family", "sess=onesecond", "-family", "clicks=default:48h", "-family", "rev=seqnum:2",
		"-at", "2030-04-30T09:02:00Z", "-read-margin", "1h", "u1")...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, "other families passed through\n")
	assert.Regexp(t, `\njunk +j .* yes +"\\x00\\x01\\x02"\n`, stdout)
	assert.Regexp(t, `\nclicks +"\\xff\\xffwt:n" .* yes `, stdout)
	assert.Regexp(t, `\nsess +token .* 58m0s +no: within the read margin `, stdout)

	_, stderr, code = cellttl(with("inspect", "-family", "sess=onesecond", "nobody")...)
	assert.Equal(t, exitFailed, code)
	assert.Equal(t, "cellttl inspect: row \"nobody\" not found in table \"t\"\n", stderr)

	// "--" ends the flags, for a row key that starts with "-".
	put(t, raw, "-x", "sess", "a", base.Add(time.Hour))
	stdout, _, code = cellttl(with("inspect", "-family", "sess=onesecond", "-at", "2030-04-30T09:00:00Z", "--", "-x")...)
	assert.Equal(t, exitOK, code)
	assert.Contains(t, stdout, `row "-x" of table "t"`)
}
