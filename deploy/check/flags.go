package check

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// ErrFlag reports a command line with a flag the command does not take,
// or without a flag the deployment needs.
var ErrFlag = errors.New("flag")

// Flags maps the flag names a command takes to whether each takes a
// value (false for a boolean flag).
type Flags map[string]bool

// helpFlag is a flag's line in Go's flag package usage: "  -name" for a
// boolean, "  -name TYPE" for one that takes a value.
var helpFlag = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_-]*)(?: (\S+))?$`)

// ParseHelp reads the flags from the usage text Go's flag package prints.
func ParseHelp(help string) Flags {
	fl := Flags{}
	sc := bufio.NewScanner(strings.NewReader(help))
	for sc.Scan() {
		if m := helpFlag.FindStringSubmatch(sc.Text()); m != nil {
			fl[m[1]] = m[2] != ""
		}
	}
	return fl
}

// HelpOf runs "bin sub -h" and returns the flags its usage lists. It fails
// if the usage lists none.
func HelpOf(ctx context.Context, bin, sub string) (Flags, error) {
	out, _ := exec.CommandContext(ctx, bin, sub, "-h").CombinedOutput()
	fl := ParseHelp(string(out))
	if len(fl) == 0 {
		return nil, fmt.Errorf("%w: %s %s -h lists no flag:\n%s", ErrFlag, bin, sub, out)
	}
	return fl, nil
}

// Parse splits a command line's arguments into flag values, by name, as
// Go's flag package reads them (-name=value, -name value, -name for a
// boolean; a double dash too), and fails naming each flag fl does not
// list, keeping its value (after "=") so that later checks still see it.
// Arguments after the flags are refused: a sweep takes none.
func (fl Flags) Parse(args []string) (map[string]string, error) {
	vals := map[string]string{}
	var errs []error
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			errs = append(errs, fmt.Errorf("%w: argument %q: not a flag", ErrFlag, a))
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, ok := fl[name]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%w: -%s: the command takes no such flag", ErrFlag, name))
			if !hasVal {
				val = "true"
			}
		case !hasVal && takes && i+1 < len(args):
			i++
			val = args[i]
		case !hasVal && takes:
			errs = append(errs, fmt.Errorf("%w: -%s: no value", ErrFlag, name))
		case !hasVal:
			val = "true"
		}
		vals[name] = val
	}
	return vals, errors.Join(errs...)
}
