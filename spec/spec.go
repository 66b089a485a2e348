// Package spec parses the strategy specs that cellttl's commands and the Beam jobs take on their command lines.
//
// A spec is onesecond, default:DURATION, seqnum:VERSIONS or counter:…,
// optionally behind grace:DURATION:, and a move's other halves are read by
// ParseFrom and ParseOld. The cellttl command and the Beam pipelines (a
// module of their own, in beam/) both parse -family, -from and -old with
// it, so that a spec means one thing everywhere; it is a package of its
// own, not internal, because the Beam module may import only what the
// root module exports.
package spec

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cellttl/ttl"
)

// Parse parses onesecond, default:DURATION or seqnum:VERSIONS, or one of
// the first two after counter: (counter:onesecond, counter:default:48h)
// for a ttl.Counter family, or any of these but seqnum after
// grace:DURATION: (grace:10m:onesecond) for a family with a ttl.Grace.
func Parse(spec string) (ttl.Strategy, error) {
	if rest, ok := strings.CutPrefix(spec, "grace:"); ok {
		return parseGrace(spec, rest)
	}
	if inner, ok := strings.CutPrefix(spec, "counter:"); ok {
		s, err := Parse(inner)
		if err != nil {
			return nil, err
		}
		if _, versions := s.Versions(); versions || strings.HasPrefix(inner, "counter:") {
			return nil, fmt.Errorf("strategy %q: a counter counts in onesecond or default:DURATION", spec)
		}
		return ttl.Counter(s), nil
	}
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch {
	case kind == "onesecond" && !hasArg:
		return ttl.OneSecond(), nil
	case kind == "default" && hasArg:
		d, err := ParseDuration(arg)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("default:%s: want a positive duration such as 48h, 90m or 30d", arg)
		}
		return ttl.DefaultExpiration(d), nil
	case kind == "seqnum" && hasArg:
		n, err := strconv.Atoi(arg)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("seqnum:%s: want a positive number of versions", arg)
		}
		return ttl.SequenceNumbers(n), nil
	}
	return nil, fmt.Errorf("strategy %q: want onesecond, default:DURATION, seqnum:VERSIONS, or counter:SPEC or grace:DURATION:SPEC around either of the first two", spec)
}

// parseGrace parses the rest of spec after its grace: prefix, DURATION:SPEC.
func parseGrace(spec, rest string) (ttl.Strategy, error) {
	arg, inner, ok := strings.Cut(rest, ":")
	g, err := ParseDuration(arg)
	if !ok || err != nil || g <= 0 || g%time.Second != 0 {
		return nil, fmt.Errorf("strategy %q: grace:%s: want a positive whole number of seconds, such as grace:10m:onesecond", spec, arg)
	}
	s, err := Parse(inner)
	if err != nil {
		return nil, err
	}
	if _, versions := s.Versions(); versions || strings.HasPrefix(inner, "grace:") {
		return nil, fmt.Errorf("strategy %q: a grace is for onesecond, default:DURATION and their counters", spec)
	}
	return ttl.Grace(s, g), nil
}

// ParseDuration parses a Go duration, or a whole number of days such as
// "30d", as cbt takes it.
func ParseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n > int(time.Duration(1<<63-1)/(24*time.Hour)) {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// ParseFrom parses the strategy a move starts from: a strategy spec (see
// Parse), or "none" for a family without a strategy, whose cells carry
// real write times; none is a nil Strategy, as ttl.Move.From takes it.
func ParseFrom(spec string) (ttl.Strategy, error) {
	if spec == "none" {
		return nil, nil
	}
	return Parse(spec)
}

// ParseOld parses what the cells written before a move's start live by
// (ttl.Move.Old): default (their old rule), for:DURATION (a Go duration
// or a whole number of days, see ParseDuration), until:TIME (RFC 3339) or
// forever.
func ParseOld(spec string) (ttl.Lifetime, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch {
	case (kind == "default" || kind == "forever") && hasArg:
		return ttl.Default, fmt.Errorf("%s takes no argument: want default, for:DURATION, until:TIME or forever", kind)
	case kind == "default":
		return ttl.Default, nil
	case kind == "forever":
		return ttl.Forever, nil
	case kind == "for":
		d, err := ParseDuration(arg)
		if err != nil || d <= 0 {
			return ttl.Default, fmt.Errorf("for:%s: want a positive duration such as 30m or 7d", arg)
		}
		return ttl.For(d), nil
	case kind == "until":
		t, err := time.Parse(time.RFC3339Nano, arg)
		if err != nil {
			return ttl.Default, fmt.Errorf("until:%s: want a time such as 2030-04-30T09:00:00Z", arg)
		}
		return ttl.Until(t), nil
	}
	return ttl.Default, errors.New("want default, for:DURATION, until:TIME or forever")
}

// Families is the value of a repeated -family NAME=SPEC flag, as the
// cellttl command and the Beam commands take it: each family with its
// strategy, and the spec as given.
type Families struct {
	Strategies map[string]ttl.Strategy
	Specs      map[string]string // NAME → SPEC as given
}

// String returns the families as NAME=SPEC, sorted, joined with commas.
func (f *Families) String() string {
	if f == nil {
		return ""
	}
	names := f.Names()
	for i, n := range names {
		names[i] = n + "=" + f.Specs[n]
	}
	return strings.Join(names, ",")
}

// Names returns the family names, sorted.
func (f *Families) Names() []string {
	names := make([]string, 0, len(f.Specs))
	for n := range f.Specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Set adds one NAME=SPEC, refusing a family given twice.
func (f *Families) Set(v string) error {
	name, given, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return errors.New("want NAME=onesecond, NAME=default:DURATION or NAME=seqnum:VERSIONS")
	}
	if _, dup := f.Specs[name]; dup {
		return fmt.Errorf("family %q given twice", name)
	}
	s, err := Parse(given)
	if err != nil {
		return fmt.Errorf("family %q: %v", name, err)
	}
	if f.Strategies == nil {
		f.Strategies, f.Specs = map[string]ttl.Strategy{}, map[string]string{}
	}
	f.Strategies[name], f.Specs[name] = s, given
	return nil
}
