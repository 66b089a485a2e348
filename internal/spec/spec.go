// Package spec parses the strategy specs that the cellttl commands take
// on their command lines: onesecond, default:DURATION and seqnum:VERSIONS.
// The cellttl command and the Beam pipeline (a module of its own, in
// beam/) both parse -family with it, so that a spec means one thing
// everywhere.
package spec

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cellttl/ttl"
)

// Parse parses onesecond, default:DURATION or seqnum:VERSIONS.
func Parse(spec string) (ttl.Strategy, error) {
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
	return nil, fmt.Errorf("strategy %q: want onesecond, default:DURATION or seqnum:VERSIONS", spec)
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
