// Package policy checks and sets the GC policies of a table's managed families.
//
// A Tool, bound once with New to the clients, the table, its families'
// strategies and the options, compares the policy each strategy relies on
// with what the table has (Tool.Check) and makes it so (Tool.Ensure),
// refusing any change that would delete or hide the cells a family
// already holds (ErrDataLoss); CheckSchedule and EnsureSchedule do the
// same for a schedule table of the families. Mismatches wrap
// ErrFamilyMismatch.
//
// A family with a strategy is only as good as its GC policy: a policy
// stricter than the strategy's deletes live cells, a looser one keeps
// expired cells stored (and billed) for ever. Policies are reported as
// cbt setgcpolicy spells them (Describe), the spelling every report and
// command of this module uses.
package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
)

// Describe spells a GC policy as cbt setgcpolicy takes it: "maxage=2d",
// "maxversions=3", "maxage=1d or maxversions=2",
// "(maxage=1d and maxversions=2) or maxversions=5", "never" for no GC;
// "missing" for a family that does not exist (a nil policy). Parse reads
// it back.
func Describe(p bigtable.GCPolicy) string {
	return describe(p, true)
}

func describe(p bigtable.GCPolicy, top bool) string {
	join := func(children []bigtable.GCPolicy, op string) string {
		if len(children) == 0 {
			return "never"
		}
		parts := make([]string, len(children))
		for i, c := range children {
			parts[i] = describe(c, false)
		}
		if top || len(children) == 1 {
			return strings.Join(parts, op)
		}
		return "(" + strings.Join(parts, op) + ")"
	}
	switch p := p.(type) {
	case nil:
		return "missing"
	case bigtable.MaxAgeGCPolicy:
		return "maxage=" + formatAge(time.Duration(p))
	case bigtable.MaxVersionsGCPolicy:
		return fmt.Sprintf("maxversions=%d", int(p))
	case bigtable.UnionGCPolicy:
		return join(p.Children, " or ")
	case bigtable.IntersectionGCPolicy:
		return join(p.Children, " and ")
	}
	if p.String() == "" {
		return "never"
	}
	return p.String()
}

// formatAge spells a GC age in the largest whole unit, as cbt takes it:
// "2d" (for 48h), "36h", "90m", "1s", "1500ms".
func formatAge(d time.Duration) string {
	for _, u := range []struct {
		d      time.Duration
		suffix string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d != 0 && d%u.d == 0 {
			return fmt.Sprintf("%d%s", d/u.d, u.suffix)
		}
	}
	return d.String()
}

// Parse reads a GC policy spelled as Describe spells it, so that a policy
// can travel as text (to a pipeline's workers, say) and come back the
// same: Describe(Parse(s)) is s. "missing" is a nil policy. A spelling
// Describe would not produce is refused with ttl.ErrInvalidOption.
func Parse(s string) (bigtable.GCPolicy, error) {
	switch s {
	case "missing":
		return nil, nil
	case "never":
		return bigtable.NoGcPolicy(), nil
	}
	p := &parser{text: s, toks: strings.Fields(strings.NewReplacer("(", " ( ", ")", " ) ").Replace(s))}
	r, err := p.expr()
	if err == nil && p.i < len(p.toks) {
		err = p.unexpected()
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// A parser reads the tokens of a policy's spelling: rules ("maxage=2d",
// "maxversions=3"), "or", "and", and parentheses around a nested union or
// intersection.
type parser struct {
	text string
	toks []string
	i    int
}

// expr reads rules joined by one operator.
func (p *parser) expr() (bigtable.GCPolicy, error) {
	first, err := p.term()
	if err != nil {
		return nil, err
	}
	children := []bigtable.GCPolicy{first}
	op := ""
	for p.i < len(p.toks) && (p.toks[p.i] == "or" || p.toks[p.i] == "and") {
		if op != "" && p.toks[p.i] != op {
			return nil, fmt.Errorf("%w: GC policy %q mixes or and and without parentheses", ttl.ErrInvalidOption, p.text)
		}
		op = p.toks[p.i]
		p.i++
		next, err := p.term()
		if err != nil {
			return nil, err
		}
		children = append(children, next)
	}
	switch op {
	case "or":
		return bigtable.UnionPolicy(children...), nil
	case "and":
		return bigtable.IntersectionPolicy(children...), nil
	}
	return first, nil
}

// term reads one rule, or a parenthesised expression.
func (p *parser) term() (bigtable.GCPolicy, error) {
	if p.i >= len(p.toks) {
		return nil, fmt.Errorf("%w: GC policy %q ends too soon", ttl.ErrInvalidOption, p.text)
	}
	tok := p.toks[p.i]
	p.i++
	if tok == "(" {
		r, err := p.expr()
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.toks) || p.toks[p.i] != ")" {
			return nil, fmt.Errorf("%w: GC policy %q has an unclosed parenthesis", ttl.ErrInvalidOption, p.text)
		}
		p.i++
		return r, nil
	}
	if tok == "never" {
		return bigtable.NoGcPolicy(), nil
	}
	if age, ok := strings.CutPrefix(tok, "maxage="); ok {
		d, err := parseAge(age)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: GC policy %q: maxage=%s is not a positive age such as 2d, 36h or 1500ms", ttl.ErrInvalidOption, p.text, age)
		}
		return bigtable.MaxAgePolicy(d), nil
	}
	if n, ok := strings.CutPrefix(tok, "maxversions="); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%w: GC policy %q: maxversions=%s is not a positive number", ttl.ErrInvalidOption, p.text, n)
		}
		return bigtable.MaxVersionsPolicy(v), nil
	}
	p.i--
	return nil, p.unexpected()
}

func (p *parser) unexpected() error {
	return fmt.Errorf("%w: GC policy %q: unexpected %q; want maxage=AGE, maxversions=N, or, and, parentheses, never",
		ttl.ErrInvalidOption, p.text, p.toks[p.i])
}

// parseAge reads an age as formatAge spells it: a whole number of days
// ("2d"), or a Go duration.
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n > int64(time.Duration(1<<63-1)/(24*time.Hour)) {
			return 0, fmt.Errorf("bad age %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}
