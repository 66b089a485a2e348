package terraform

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
)

// check runs Check on a file of testdata/show.
func check(t *testing.T, name string) (*Report, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "show", name))
	require.NoError(t, err)
	defer f.Close()
	return Check(f, Where{Instance: "my-instance", Table: "events"}, five())
}

// kinds returns each finding as "family address kind".
func kinds(r *Report) []string {
	out := make([]string, len(r.Findings))
	for i, f := range r.Findings {
		out[i] = strings.Join(strings.Fields(f.Family+" "+f.Address+" "+string(f.Kind)), " ")
	}
	return out
}

// TestCheckStateShrink checks a state in which Terraform would shrink
// family clicks' max age from its strategy's 7 days to 1 day, and swept's
// below its grace: data loss, each named, and nothing said of the
// resources of another table or instance, or of a data source. The other
// families match, read from every form the provider writes (days,
// duration, max_version, gc_rules, an age of a second as the provider
// writes it back, in microseconds), in nested modules.
func TestCheckStateShrink(t *testing.T) {
	r, err := check(t, "state-shrink.json")
	require.Error(t, err)
	assert.True(t, errors.Is(err, policy.ErrDataLoss), err)
	assert.False(t, r.Plan)
	assert.Equal(t, []string{
		"clicks module.bigtable.google_bigtable_gc_policy.events_clicks shorter-age",
		"hits module.bigtable.google_bigtable_gc_policy.events_hits matches",
		"seq module.bigtable.google_bigtable_gc_policy.events_seq matches",
		"sess module.bigtable.module.inner.google_bigtable_gc_policy.events_sess matches",
		"swept module.bigtable.module.inner.google_bigtable_gc_policy.events_swept shorter-grace",
	}, kinds(r))
	clicks := r.Findings[0]
	assert.True(t, clicks.Loss)
	assert.Equal(t, "maxage=1d", clicks.Found)
	assert.Equal(t, "maxage=7d", clicks.Want)
	assert.False(t, clicks.Abandon)
	assert.Equal(t, `family "clicks" (DefaultExpiration(168h0m0s)): module.bigtable.google_bigtable_gc_policy.events_clicks sets maxage=1d, want maxage=7d: `+
		`data loss: an age shorter than the strategy's: GC deletes live cells before their expiry`, clicks.String())
	assert.Equal(t, "maxage=1s", r.Findings[3].Found)
	assert.True(t, r.Findings[3].Abandon)
	assert.Len(t, r.Losses(), 2)
	assert.Contains(t, err.Error(), `table "events": the Terraform state: family "clicks"`)
	assert.Contains(t, err.Error(), `family "swept" (Grace(DefaultExpiration(36h0m0s), 1m30s)): module.bigtable.module.inner.google_bigtable_gc_policy.events_swept sets maxage=36h, want maxage=129690s`)
	assert.NotContains(t, err.Error(), "hits")
}

// TestCheckPlan checks a plan: a replacement that shrinks an age (loss),
// create_before_destroy whose destroy leaves no GC, an age on a family of
// sequence numbers (loss), an abandoned resource, a policy known only
// after apply, and the table's update that drops a family (loss) and
// gives the counter another type.
func TestCheckPlan(t *testing.T) {
	r, err := check(t, "plan-shrink.json")
	require.Error(t, err)
	assert.True(t, errors.Is(err, policy.ErrDataLoss), err)
	assert.True(t, r.Plan)
	assert.Equal(t, []string{
		"clicks google_bigtable_gc_policy.events_clicks shorter-age",
		"hits google_bigtable_gc_policy.events_hits unknown",
		"hits google_bigtable_table.events wrong-type",
		"seq google_bigtable_gc_policy.events_seq age-on-sequence",
		"seq google_bigtable_table.events family-deleted",
		"sess google_bigtable_gc_policy.events_sess differs",
		"swept google_bigtable_gc_policy.events_swept abandoned",
	}, kinds(r))
	assert.Equal(t, "never", r.Findings[5].Found)
	assert.Contains(t, r.Findings[5].String(), `the plan destroys the resource without deletion_policy = "ABANDON", which sets no GC: expired cells stay stored`)
	assert.Contains(t, r.Findings[2].String(), "the table gives it aggregate cells, its strategy needs counter cells")
	assert.Contains(t, r.Findings[1].String(), "its max_age is known only after apply")
	assert.Contains(t, err.Error(), "the Terraform plan")

	r, err = check(t, "plan-destroy.json")
	assert.True(t, errors.Is(err, policy.ErrDataLoss), err)
	assert.Equal(t, []string{
		"clicks google_bigtable_gc_policy.events_clicks abandoned",
		"clicks google_bigtable_table.events table-deleted",
		"hits unmanaged",
		"hits google_bigtable_table.events table-deleted",
		"seq google_bigtable_gc_policy.events_seq matches",
		"seq google_bigtable_table.events table-deleted",
		"sess google_bigtable_gc_policy.events_sess differs",
		"sess google_bigtable_table.events table-deleted",
		"swept unmanaged",
		"swept google_bigtable_table.events table-deleted",
	}, kinds(r))
	assert.Equal(t, `family "hits" (Counter(DefaultExpiration(1h0m0s))): no google_bigtable_gc_policy sets its policy: Terraform leaves it as it is`,
		r.Findings[2].String())
	assert.Equal(t, `family "seq" (SequenceNumbers(3)): google_bigtable_gc_policy.events_seq sets maxversions=3, want maxversions=3: the policy the strategy needs`,
		r.Findings[4].String())
}

// TestCheckGenerated checks that a state holding what GCPolicies writes,
// as the provider stores it, matches every family, with no error; and
// that the same resources without deletion_policy are said to set no GC
// when removed, still matching.
func TestCheckGenerated(t *testing.T) {
	hcl, err := GCPolicies(five(), Options{Instance: "my-instance", Table: "events"})
	require.NoError(t, err)
	blocks, err := parseHCL(hcl)
	require.NoError(t, err)
	for _, abandoned := range []bool{true, false} {
		var b strings.Builder
		b.WriteString(`{"format_version": "1.0", "values": {"root_module": {"resources": [`)
		for i, blk := range blocks {
			v := blk.values()
			if !abandoned {
				delete(v, "deletion_policy")
			}
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(`{"address": "google_bigtable_gc_policy.` + blk.labels[1] + `", "mode": "managed", "type": "google_bigtable_gc_policy", "values": `)
			b.WriteString(mustJSON(t, v) + "}")
		}
		b.WriteString("]}}}")
		r, err := Check(strings.NewReader(b.String()), Where{Instance: "my-instance", Table: "events"}, five())
		require.NoError(t, err)
		for _, f := range r.Findings {
			assert.Equal(t, Matches, f.Kind, f.String())
			assert.Equal(t, abandoned, f.Abandon, f.String())
			assert.Equal(t, !abandoned, strings.Contains(f.String(), `without deletion_policy = "ABANDON"`), f.String())
		}
		assert.Empty(t, r.Losses())
	}
}

// TestCheckRefused checks what is not a plan or a state: refused with
// ErrNotTerraform (and ttl.ErrInvalidOption), saying why; and bad
// families and a nil reader.
func TestCheckRefused(t *testing.T) {
	schema, err := os.ReadFile("testdata/provider-schema.json")
	require.NoError(t, err)
	for in, msg := range map[string]string{
		"hello":                             "it is not JSON of the expected shape",
		"[1, 2]":                            "it is not JSON of the expected shape",
		`{"values": {}}`:                    "it has no format_version",
		`{"format_version": "2.0"}`:         `format_version "2.0": only 1.x is read`,
		`{"format_version": "1.0"} {}`:      "it holds more than one JSON value",
		`{"format_version": 1}`:             "it is not JSON of the expected shape",
		string(schema):                      "it is a provider schema",
		`{"format_version": "1.0", "values`: "it is not JSON of the expected shape",
	} {
		_, err := Check(strings.NewReader(in), Where{Instance: "i", Table: "events"}, five())
		require.Error(t, err, in)
		assert.True(t, errors.Is(err, ErrNotTerraform), err)
		assert.True(t, errors.Is(err, ttl.ErrInvalidOption), err)
		assert.Contains(t, err.Error(), msg)
	}
	_, err = Check(strings.NewReader(`{"format_version": "1.0"}`), Where{Instance: "i", Table: "events"}, nil)
	assert.True(t, errors.Is(err, ttl.ErrInvalidStrategy), err)
	_, err = Check(nil, Where{Instance: "i", Table: "events"}, five())
	assert.True(t, errors.Is(err, ttl.ErrNilArgument), err)

	// A state that sets one family's policy: the others are unmanaged,
	// which is no fault.
	r, err := Check(strings.NewReader(`{"format_version": "1.0", "values": {"root_module": {"resources": [
	  {"address": "a.x", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"table": "events", "column_family": "clicks", "max_age": [{"days": 7}]}}]}}}`),
		Where{Instance: "i", Table: "events"}, five())
	require.NoError(t, err)
	for _, f := range r.Findings[1:] {
		assert.Equal(t, Unmanaged, f.Kind)
	}
}

// TestCheckMismatch checks a state whose only findings are mismatches
// that lose nothing: the error wraps policy.ErrFamilyMismatch, not
// policy.ErrDataLoss; and a resource the provider refuses.
func TestCheckMismatch(t *testing.T) {
	state := `{"format_version": "1.0", "values": {"root_module": {"resources": [
	  {"address": "a.x", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"table": "events", "column_family": "clicks", "max_age": [{"days": 30}]}},
	  {"address": "a.y", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"table": "events", "column_family": "seq",
	    "max_age": [{"duration": "1h"}], "max_version": [{"number": 3}]}},
	  {"address": "a.z", "mode": "managed", "type": "google_bigtable_table", "values": {"name": "events", "column_family": [{"family": "clicks", "type": "{bad"},
	    {"family": "hits", "type": "intsum"}, {"family": "seq"}, {"family": "sess"}, {"family": "swept"}]}}
	]}}}`
	r, err := Check(strings.NewReader(state), Where{Instance: "", Table: "events"}, five())
	require.Error(t, err)
	assert.True(t, errors.Is(err, policy.ErrFamilyMismatch), err)
	assert.False(t, errors.Is(err, policy.ErrDataLoss), err)
	assert.Equal(t, []string{
		"clicks a.x differs", "clicks a.z invalid", "hits unmanaged", "seq a.y invalid", "sess unmanaged", "swept unmanaged",
	}, kinds(r))
	assert.Contains(t, r.Findings[0].Reason, "not the policy the strategy needs (maxage=7d), though it deletes no cell the strategy keeps")
	assert.Contains(t, r.Findings[3].Reason, "max_age and max_version without mode: the provider refuses them")
	assert.False(t, Differs.Loss())
	assert.True(t, Differs.Mismatch())
	assert.False(t, Unmanaged.Mismatch())
}

// TestCheckUnknownTable checks a plan whose resource's table is known
// only after apply: reported as unknown, a mismatch, never skipped.
func TestCheckUnknownTable(t *testing.T) {
	plan := `{"format_version": "1.2", "resource_changes": [{"address": "g.x", "mode": "managed", "type": "google_bigtable_gc_policy",
	  "change": {"actions": ["create"], "before": null, "after": {"column_family": "clicks"}, "after_unknown": {"table": true}}},
	  {"address": "t.x", "mode": "managed", "type": "google_bigtable_table",
	  "change": {"actions": ["update"], "before": {"name": "events"}, "after": {"name": "events"}, "after_unknown": {"column_family": true}}},
	  {"address": "t.y", "mode": "managed", "type": "google_bigtable_table",
	  "change": {"actions": ["delete"], "before": {"name": "events", "deletion_policy": "ABANDON"}, "after": null}}]}`
	r, err := Check(strings.NewReader(plan), Where{Instance: "i", Table: "events"}, map[string]ttl.Strategy{"clicks": ttl.OneSecond()})
	assert.True(t, errors.Is(err, policy.ErrFamilyMismatch), err)
	assert.Equal(t, []string{"g.x unknown", "clicks unmanaged", "clicks t.x unknown"}, kinds(r))
	assert.Equal(t, "unknown family: g.x: its table or column family is known only after apply", r.Findings[0].String())
}

// TestLossOf checks the data-loss rules of each kind of policy against
// each kind of strategy.
func TestLossOf(t *testing.T) {
	h := time.Hour
	age := func(d time.Duration) bigtable.GCPolicy { return bigtable.MaxAgePolicy(d) }
	versions := bigtable.MaxVersionsPolicy
	move := ttl.Move{From: ttl.DefaultExpiration(2 * h), To: ttl.OneSecond(), Start: time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)}
	seqMove := ttl.Move{From: ttl.SequenceNumbers(2), To: ttl.OneSecond(), Start: time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)}
	for _, tt := range []struct {
		s    ttl.Strategy
		p    bigtable.GCPolicy
		want Kind
	}{
		{ttl.OneSecond(), age(time.Millisecond), Differs},
		{ttl.OneSecond(), age(1000 * h), Differs},
		{ttl.OneSecond(), versions(1), VersionsOnTime},
		{ttl.DefaultExpiration(2 * h), age(h), ShorterAge},
		{ttl.DefaultExpiration(2 * h), age(2 * h), Matches},
		{ttl.Counter(ttl.DefaultExpiration(2 * h)), age(h), ShorterAge},
		{ttl.Grace(ttl.OneSecond(), h), age(h - time.Second), ShorterGrace},
		{ttl.Grace(ttl.DefaultExpiration(h), h), age(h), ShorterGrace},
		{ttl.Grace(ttl.DefaultExpiration(h), h), age(h - time.Second), ShorterAge},
		{ttl.SequenceNumbers(3), age(1000 * h), AgeOnSequence},
		{ttl.SequenceNumbers(3), versions(2), FewerVersions},
		{ttl.SequenceNumbers(3), versions(4), Differs},
		{ttl.SequenceNumbers(3), bigtable.NoGcPolicy(), Differs},
		{ttl.SequenceNumbers(3), bigtable.UnionPolicy(versions(4), age(h)), AgeOnSequence},
		{ttl.SequenceNumbers(3), bigtable.IntersectionPolicy(age(h), versions(4)), Differs},
		{ttl.SequenceNumbers(3), bigtable.IntersectionPolicy(age(h), versions(2)), AgeOnSequence},
		{ttl.DefaultExpiration(h), bigtable.IntersectionPolicy(age(2*h), versions(1)), Differs},
		{move, age(2 * h), Matches},
		{move, age(h), ShorterAge},
		{move, age(3 * h), Differs},
		{move, age(time.Second), Matches}, // the move is finished
		{seqMove, age(1000 * h), ShorterAge},
		{seqMove, versions(5), VersionsOnTime},
		{seqMove, bigtable.NoGcPolicy(), Matches},
		{seqMove, age(time.Second), Matches}, // the move is finished
	} {
		got, _ := judge(tt.s, tt.p)
		assert.Equal(t, tt.want, got, "%v under %v", tt.p, tt.s)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// FuzzCheck checks that no input makes Check panic, and that it returns a
// report or an error, never neither.
func FuzzCheck(f *testing.F) {
	for _, name := range []string{"state-shrink.json", "plan-shrink.json", "plan-destroy.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "show", name))
		require.NoError(f, err)
		f.Add(raw)
	}
	f.Add([]byte(`{"format_version": "1.0", "values": {"root_module": {"resources": [{"mode": "managed", "type": "google_bigtable_gc_policy",
	  "values": {"table": "events", "column_family": "clicks", "gc_rules": "{\"rules\":[{\"max_age\":\"1h\"}]}", "max_age": [1], "max_version": [null]}}]}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Check(strings.NewReader(string(in)), Where{Instance: "my-instance", Table: "events"}, five())
		if r == nil && err == nil {
			t.Fatal("no report and no error")
		}
	})
}

// TestCheckMutations checks that Check does not panic, and returns a
// report or an error, when any one value of the fixtures is replaced by a
// value of another JSON type, or the file is cut short anywhere.
func TestCheckMutations(t *testing.T) {
	for _, name := range []string{"state-shrink.json", "plan-shrink.json", "plan-destroy.json"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "show", name))
		require.NoError(t, err)
		run := func(in []byte) {
			r, err := Check(strings.NewReader(string(in)), Where{Instance: "my-instance", Table: "events"}, five())
			if r == nil && err == nil {
				t.Fatalf("%s: no report and no error for %s", name, in)
			}
		}
		for i := 0; i < len(raw); i += 97 {
			run(raw[:i])
		}
		var doc any
		require.NoError(t, json.Unmarshal(raw, &doc))
		replacements := []any{nil, true, json.Number("1.5"), "x", []any{}, []any{"x"}, map[string]any{}}
		mutations := 0
		var walk func(v any, set func(any))
		walk = func(v any, set func(any)) {
			for _, r := range replacements {
				set(r)
				out, err := json.Marshal(doc)
				require.NoError(t, err)
				run(out)
				mutations++
			}
			set(v)
			switch v := v.(type) {
			case map[string]any:
				for k, c := range v {
					walk(c, func(n any) { v[k] = n })
				}
			case []any:
				for i, c := range v {
					walk(c, func(n any) { v[i] = n })
				}
			}
		}
		walk(doc, func(n any) { doc = n })
		assert.Greater(t, mutations, 1000, name)
	}
}

// TestCheckNoResource checks a file in which no resource names the table,
// as a mistyped -table gives: ErrNoResource, naming the tables the file
// has, not a report of unmanaged families that passes.
func TestCheckNoResource(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "show", "state-shrink.json"))
	require.NoError(t, err)
	defer f.Close()
	r, err := Check(f, Where{Instance: "my-instance", Table: "eventz"}, five())
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrNoResource), err)
	assert.False(t, errors.Is(err, policy.ErrFamilyMismatch), err)
	assert.Contains(t, err.Error(), `no resource of the Terraform state manages table "eventz"`)
	assert.Contains(t, err.Error(), `the tables it has: "events", "other"`)
	require.NotNil(t, r)
	assert.Equal(t, []string{"events", "other"}, r.Tables)
	assert.Empty(t, r.Findings)

	// An empty state has no table at all.
	_, err = Check(strings.NewReader(`{"format_version": "1.0"}`), Where{Table: "events"}, five())
	assert.True(t, errors.Is(err, ErrNoResource), err)
	assert.Contains(t, err.Error(), "it names no table")
}

// TestCheckProject checks that a resource of another project (its project,
// or the project of its instance's path) or another instance is not the
// table's, and that a resource that names no project matches any.
func TestCheckProject(t *testing.T) {
	state := `{"format_version": "1.0", "values": {"root_module": {"resources": [
	  {"address": "a.p", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"project": "p", "instance_name": "i", "table": "events", "column_family": "clicks", "max_age": [{"days": 1}]}},
	  {"address": "a.q", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"instance_name": "projects/q/instances/i", "table": "events", "column_family": "clicks", "max_age": [{"days": 2}]}},
	  {"address": "a.n", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"instance_name": "i", "table": "events", "column_family": "clicks", "max_age": [{"days": 3}]}},
	  {"address": "a.j", "mode": "managed", "type": "google_bigtable_gc_policy", "values": {"project": "q", "instance_name": "j", "table": "events", "column_family": "clicks", "max_age": [{"days": 4}]}}
	]}}}`
	one := map[string]ttl.Strategy{"clicks": ttl.DefaultExpiration(7 * 24 * time.Hour)}
	for _, tt := range []struct {
		where Where
		want  []string
	}{
		{Where{Project: "p", Instance: "i", Table: "events"}, []string{"clicks a.n shorter-age", "clicks a.p shorter-age"}},
		{Where{Project: "q", Instance: "i", Table: "events"}, []string{"clicks a.n shorter-age", "clicks a.q shorter-age"}},
		{Where{Project: "q", Instance: "j", Table: "events"}, []string{"clicks a.j shorter-age"}},
		{Where{Table: "events"}, []string{"clicks a.j shorter-age", "clicks a.n shorter-age", "clicks a.p shorter-age", "clicks a.q shorter-age"}},
	} {
		r, err := Check(strings.NewReader(state), tt.where, one)
		require.Error(t, err, tt.where)
		assert.Equal(t, tt.want, kinds(r), tt.where)
	}
	_, err := Check(strings.NewReader(state), Where{Project: "other", Instance: "j", Table: "events"}, one)
	assert.True(t, errors.Is(err, ErrNoResource), err)
}

// TestCheckNotInTable checks that a table resource whose column_family
// blocks lack a managed family is data loss, said plainly.
func TestCheckNotInTable(t *testing.T) {
	state := `{"format_version": "1.0", "values": {"root_module": {"resources": [
	  {"address": "t.x", "mode": "managed", "type": "google_bigtable_table", "values": {"name": "events", "column_family": [{"family": "other"}]}}]}}}`
	r, err := Check(strings.NewReader(state), Where{Table: "events"}, map[string]ttl.Strategy{"clicks": ttl.OneSecond()})
	assert.True(t, errors.Is(err, policy.ErrDataLoss), err)
	require.Len(t, r.Findings, 2)
	assert.Equal(t, Unmanaged, r.Findings[0].Kind)
	assert.True(t, NotInTable.Loss())
	assert.True(t, r.Findings[1].Loss)
	assert.Len(t, r.Losses(), 1)
	assert.Equal(t, `family "clicks" (OneSecond()): t.x: data loss: the table's column_family blocks do not list the family: `+
		`the first apply after the family exists deletes it and every cell in it`, r.Findings[1].String())
}
