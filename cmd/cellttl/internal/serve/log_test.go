package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewLogText(t *testing.T) {
	var b bytes.Buffer
	for _, f := range []string{"", "text"} {
		w, err := NewLog(&b, f)
		if err != nil || w != &b {
			t.Errorf("NewLog(%q) = %v, %v; want the writer itself", f, w, err)
		}
	}
	if _, err := NewLog(&b, "xml"); !errors.Is(err, ErrLogFormat) || !strings.Contains(err.Error(), `-log-format "xml"`) {
		t.Errorf("NewLog(xml): %v", err)
	}
}

func TestLogWriterJSON(t *testing.T) {
	var b bytes.Buffer
	w, err := NewLog(&b, "json")
	if err != nil {
		t.Fatal(err)
	}
	l := w.(*LogWriter)
	l.Write([]byte("round 2026-11-29T01:00:00Z: 3 events\nprogress: 1 sha"))
	l.Write([]byte("rd\r\n\ncellttl sweep: the round did not finish\n"))
	l.Error("cellttl sweep: rpc error: unavailable")
	l.Error("cellttl: no command")
	l.Write([]byte("cellttl move rewrite: refused\n"))
	l.Write([]byte("no end"))
	l.Flush()
	l.Flush()
	type record struct {
		Level, Msg, Command string
		Time                string `json:"time"`
	}
	var got []record
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if r.Time == "" {
			t.Errorf("%q has no time", line)
		}
		r.Time = ""
		got = append(got, r)
	}
	want := []record{
		{"INFO", "round 2026-11-29T01:00:00Z: 3 events", "", ""},
		{"INFO", "progress: 1 shard", "", ""},
		{"WARN", "the round did not finish", "sweep", ""},
		{"ERROR", "rpc error: unavailable", "sweep", ""},
		{"ERROR", "cellttl: no command", "", ""},
		{"WARN", "refused", "move rewrite", ""},
		{"INFO", "no end", "", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d:\n%s", len(got), len(want), b.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("record %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
