package main

import (
	"context"
	"errors"
	"flag"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/policy"
)

// closedAddr returns a local address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// TestUnreachable is issue 21's first finding: with BIGTABLE_EMULATOR_HOST
// at a port where nothing listens, every command fails within
// -connect-timeout, naming the address and where it came from, instead
// of hanging.
func TestUnreachable(t *testing.T) {
	addr := closedAddr(t)
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	silent := silentAddr(t)
	all := [][]string{
		with("check", "-family", "sess=onesecond"),
		with("stats"),
		with("ensure", "-family", "sess=onesecond"),
		with("inspect", "-family", "sess=onesecond", "u1"),
		append([]string{"move", "plan"}, with("", "-family", "sess=onesecond", "-from", "none", "-start", start)[1:]...),
		with("sweep", "-family", "sess=onesecond", "-since", start),
	}
	for _, args := range all {
		// A port where nothing listens is refused at once (issue 28), not
		// after -connect-timeout (10s by default), and says so.
		began := time.Now()
		stdout, stderr, code := cellttl(args...)
		assert.Equal(t, exitFailed, code, args)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, "cannot reach Bigtable: the emulator at BIGTABLE_EMULATOR_HOST="+addr+": dial tcp "+addr+": connect: connection refused\n", args)
		assert.Less(t, time.Since(began), 5*time.Second, "refused at once: %v", args)
	}
	t.Setenv("BIGTABLE_EMULATOR_HOST", silent)
	for _, args := range all {
		// A server that takes the connection and never answers is
		// bounded by -connect-timeout.
		began := time.Now()
		stdout, stderr, code := cellttl(append(args, "-connect-timeout", "500ms")...)
		assert.Equal(t, exitFailed, code, args)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, "cannot reach Bigtable: the emulator at BIGTABLE_EMULATOR_HOST="+silent+" did not answer within -connect-timeout 500ms", args)
		assert.Less(t, time.Since(began), 20*time.Second, "bounded by -connect-timeout: %v", args)
	}
	t.Setenv("BIGTABLE_EMULATOR_HOST", addr)

	// The sentinel, and -timeout named when it is the shorter bound.
	c, err := parse(checkCommand, with("", "-family", "sess=onesecond", "-timeout", "1h")[1:])
	require.NoError(t, err)
	assert.Equal(t, defaultConnectTimeout, c.connectTimeout, "bounded by default")
	c.connectTimeout = 300 * time.Millisecond
	admin, err := adminClient(context.Background(), c)
	require.NoError(t, err)
	defer admin.Close()
	_, err = reach(context.Background(), c, admin)
	assert.ErrorIs(t, err, errUnreachable)
	assert.Contains(t, err.Error(), "BIGTABLE_EMULATOR_HOST="+addr)

	c.connectTimeout = 0
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = reach(ctx, c, admin)
	assert.ErrorIs(t, err, errUnreachable)

	// The default is stated in -h.
	stdout, _, _ := cellttl("check", "-h")
	assert.Regexp(t, `\n  -connect-timeout duration\n(.*\n)*.*\(default 10s\)`, stdout)
}

// silentAddr returns a local address that takes connections and never
// answers, for the test.
func silentAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// TestNoCredentials is issue 28's seventh stumble: without
// BIGTABLE_EMULATOR_HOST and without credentials, the error names Cloud
// Bigtable by -project and -instance, and says how to give credentials or
// use the emulator.
func TestNoCredentials(t *testing.T) {
	home := t.TempDir()
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	t.Setenv("HOME", home)
	t.Setenv("CLOUDSDK_CONFIG", home)
	stdout, stderr, code := cellttl(with("stats")...)
	assert.Equal(t, exitFailed, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `cellttl stats: cannot reach Bigtable: Cloud Bigtable, project "`+emulator.Project+`" instance "`+emulator.Instance+`" (-project, -instance): `)
	assert.Contains(t, stderr, "could not find default credentials")
	assert.Contains(t, stderr, "application default credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS=FILE)")
	assert.Contains(t, stderr, "or set BIGTABLE_EMULATOR_HOST=HOST:PORT to use an emulator")
}

// TestServer checks that an error names where the address came from.
func TestServer(t *testing.T) {
	c := &config{project: "p", instance: "i"}
	t.Setenv("BIGTABLE_EMULATOR_HOST", "")
	assert.Equal(t, `Cloud Bigtable, project "p" instance "i" (-project, -instance)`, server(c))
	t.Setenv("BIGTABLE_EMULATOR_HOST", "localhost:1")
	assert.Equal(t, "the emulator at BIGTABLE_EMULATOR_HOST=localhost:1", server(c))
}

// TestNegativeDurations refuses a negative value of every duration flag,
// naming the flag: -timeout -5s used to mean no limit.
func TestNegativeDurations(t *testing.T) {
	for _, cmd := range commands {
		var c config
		fs := newFlagSet(cmd, &c)
		fs.VisitAll(func(f *flag.Flag) {
			if g, ok := f.Value.(flag.Getter); !ok {
				return
			} else if _, ok := g.Get().(time.Duration); !ok {
				return
			}
			args := strings.Fields(cmd.name)
			args = append(args, on...)
			args = append(args, "-family", "sess=onesecond", "-"+f.Name, "-5s", "u1")
			stdout, stderr, code := cellttl(args...)
			assert.Equal(t, exitUsage, code, args)
			assert.Empty(t, stdout, args)
			assert.Contains(t, stderr, "cellttl "+cmd.name+": -"+f.Name+" -5s: a duration cannot be negative\n", args)
			_, err := parse(cmd, args[len(strings.Fields(cmd.name)):])
			assert.ErrorIs(t, err, errNegative, args)
		})
	}
}

// TestUnknownFamily is issue 21's second finding: a family named on the
// command line that the table does not have is refused by every command
// with the same exit status (issue 28), a creation that needs -create in
// ensure, a mismatch in check, each suggesting the nearest family the
// table has.
func TestUnknownFamily(t *testing.T) {
	e, raw := startEmulator(t, map[string]bigtable.GCPolicy{"sess": nil, "meta": nil})
	put(t, raw, "u1", "sess", "token", time.Now().Add(time.Hour))
	before := policies(t, e.Admin)
	const suggestion = `table "t" has no family "sesss" (did you mean "sess"?); its families: meta, sess`

	for _, args := range [][]string{
		with("stats", "-family", "sesss=onesecond"),
		with("inspect", "-family", "sesss=onesecond", "u1"),
	} {
		stdout, stderr, code := cellttl(args...)
		assert.Equal(t, exitMismatch, code, args)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, suggestion, args)
	}
	_, stderr, code := cellttl(with("inspect", "-family", "sess=onesecond", "-other", "mta", "u1")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, `has no family "mta" (did you mean "meta"?)`)
	_, stderr, code = cellttl(with("stats", "-family", "visits=onesecond")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, `has no family "visits"; its families: meta, sess`, "no suggestion beyond two edits")

	for _, apply := range []string{"-timeout=1m", "-apply"} {
		stdout, stderr, code := cellttl(with("ensure", "-family", "sesss=onesecond", apply)...)
		assert.Equal(t, exitMismatch, code, apply)
		assert.Empty(t, stdout, apply)
		assert.Contains(t, stderr, suggestion, apply)
		assert.Contains(t, stderr, "refused, nothing changed; give -create to create it", apply)
		assert.Equal(t, before, policies(t, e.Admin), apply)
	}
	stdout, stderr, code := cellttl(with("check", "-family", "sesss=onesecond")...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stdout, "sesss   OneSecond()  missing")
	assert.Contains(t, stderr, `cellttl check: table "t" has no family "sesss" (did you mean "sess"?)`)
	start := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	_, stderr, code = cellttl(append([]string{"move", "plan"}, with("", "-family", "sesss=onesecond", "-from", "none", "-start", start)[1:]...)...)
	assert.Equal(t, exitMismatch, code)
	assert.Contains(t, stderr, suggestion)

	// With -create, the family is created.
	_, stderr, code = cellttl(with("ensure", "-family", "sesss=onesecond", "-create", "-apply")...)
	assert.Equal(t, exitOK, code, stderr)
	assert.Equal(t, "age() > 1000000", policies(t, e.Admin)["sesss"])

	// The sentinel, and a table that does not exist: not a family, its
	// own sentinel, refused by every command alike.
	c := &config{table: "t", project: emulator.Project, instance: emulator.Instance}
	err := tableFamilies{exists: true, names: []string{"sess"}}.unknown(c, []string{"sesss"})
	assert.True(t, errors.Is(err, ttl.ErrUnknownFamily))
	c.table = "nope"
	err = tableFamilies{}.unknown(c, nil)
	assert.ErrorIs(t, err, policy.ErrTableNotFound)
	assert.False(t, errors.Is(err, ttl.ErrUnknownFamily), "a table is not a family")
	assert.EqualError(t, err, `policy: table not found: table "nope" does not exist on the emulator at BIGTABLE_EMULATOR_HOST=`+e.Addr)
	noTable := []string{"-project", emulator.Project, "-instance", emulator.Instance, "-table", "nope"}
	for _, args := range [][]string{
		append([]string{"stats"}, noTable...),
		append(append([]string{"stats"}, noTable...), "-family", "sess=onesecond"),
		append(append([]string{"inspect"}, noTable...), "-family", "sess=onesecond", "u1"),
		append(append([]string{"ensure"}, noTable...), "-family", "sess=onesecond"),
		append(append([]string{"move", "plan"}, noTable...), "-family", "sess=onesecond", "-from", "none", "-start", start),
		append(append([]string{"sweep"}, noTable...), "-family", "sess=onesecond", "-since", start),
	} {
		stdout, stderr, code := cellttl(args...)
		assert.Equal(t, exitMismatch, code, args)
		assert.Empty(t, stdout, args)
		assert.Contains(t, stderr, `policy: table not found: table "nope" does not exist`, args)
		assert.NotContains(t, stderr, "unknown column family", args)
	}
}
