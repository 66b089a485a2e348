package sweep_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl/sweep"
)

// TestMissedJSON: a report's missed spans give Keep as a Go duration
// string, as every duration in the module's JSON (issue 28: it printed
// "keep":1000000000), and a report decodes back to the same spans, from
// that form or from the nanoseconds earlier releases wrote.
func TestMissedJSON(t *testing.T) {
	missed := []sweep.Missed{
		{Family: "plain", From: base, Until: base.Add(time.Minute), Keep: time.Second},
		{Family: "daily", From: base, Until: base.Add(time.Hour), Keep: 26 * time.Hour},
	}
	b, err := json.Marshal(&sweep.Report{Table: "t", Missed: missed})
	require.NoError(t, err)
	assert.Contains(t, string(b), `{"family":"plain","from":"2030-04-30T09:00:00Z","until":"2030-04-30T09:01:00Z","keep":"1s"}`)
	assert.Contains(t, string(b), `"keep":"26h0m0s"`)

	var back sweep.Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, missed, back.Missed)

	var old sweep.Missed
	require.NoError(t, json.Unmarshal([]byte(`{"family":"plain","keep":1000000000}`), &old))
	assert.Equal(t, sweep.Missed{Family: "plain", Keep: time.Second}, old)

	for _, bad := range []string{`{"keep":"a second"}`, `{"family":1}`} {
		err := json.Unmarshal([]byte(bad), &old)
		require.Error(t, err, bad)
		assert.True(t, strings.HasPrefix(err.Error(), "sweep: a missed span: "), err.Error())
	}
}
