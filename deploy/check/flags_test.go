package check

import (
	"errors"
	"testing"
)

const help = `Usage: cellttl sweep -project P [-delete]

Sweep reports ...
  -delete
    	delete the expired cells found
  -every period
    	sweep every period until interrupted (default: one round)
  -family NAME=SPEC
    	a managed family
   -indented-too-far x
  -quiet
    	report no progress
`

func TestParseHelp(t *testing.T) {
	fl := ParseHelp(help)
	want := Flags{"delete": false, "every": true, "family": true, "quiet": false}
	if len(fl) != len(want) {
		t.Fatalf("flags %v, want %v", fl, want)
	}
	for k, v := range want {
		if have, ok := fl[k]; !ok || have != v {
			t.Errorf("-%s: %v %v, want %v", k, have, ok, v)
		}
	}
}

func TestFlagsParse(t *testing.T) {
	fl := ParseHelp(help)
	vals, err := fl.Parse([]string{"-every=30s", "--family", "s=onesecond", "-delete", "-quiet=false"})
	if err != nil {
		t.Fatal(err)
	}
	if vals["every"] != "30s" || vals["family"] != "s=onesecond" || vals["delete"] != "true" || vals["quiet"] != "false" {
		t.Errorf("values %v", vals)
	}
	// An unknown flag's value is kept, for the checks of its value.
	if vals, err := fl.Parse([]string{"-lease=15s", "-standby"}); err == nil || vals["lease"] != "15s" || vals["standby"] != "true" {
		t.Errorf("unknown flags: %v, %v", vals, err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-lease=15s"}, "-lease: the command takes no such flag"},
		{[]string{"-every"}, "-every: no value"},
		{[]string{"-delete", "extra"}, `argument "extra": not a flag`},
		{[]string{"--"}, `argument "--": not a flag`},
	} {
		_, err := fl.Parse(tc.args)
		if !errors.Is(err, ErrFlag) {
			t.Errorf("%q: %v, want ErrFlag", tc.args, err)
		}
		wantErr(t, err, tc.want)
	}
}
