package ttl

import (
	"sort"
	"strings"
	"time"

	"cloud.google.com/go/bigtable"
)

// readPlan is a table's live-cell filter, prepared once from its families
// so that a read only adds the instant.
//
// The filter is, per group of managed families sharing a strategy,
// Chain(select the group's families, strategy.Filter(now)), interleaved with
// a pass-through branch for the families without a strategy. Bigtable
// rejects a chain or interleave of fewer than two filters, and a careful
// engineer writes none, so single branches stand alone:
//
//   - families declared (OtherFamilies) and all managed by one strategy,
//     with no companions to hide: the strategy's filter alone;
//   - families declared: each family selected by ColumnRangeFilter, which
//     names it without a regular expression;
//   - families not declared: the unknown ones passed through by a
//     FamilyFilter matching every name but the managed ones. Bigtable
//     evaluates that regular expression for every cell.
type readPlan struct {
	groups []planGroup
	others []bigtable.Filter // pass-through branches for unmanaged families
	bare   bool              // one group and nothing else: the strategy's filter alone
}

type planGroup struct {
	strategy   Strategy
	data       bigtable.Filter // selects the group's data cells
	companions bigtable.Filter // selects its write-time companions
}

// newReadPlan prepares the filter for managed families; others lists the
// declared unmanaged families, or is nil when they are not declared; c
// tells whether data cells have write-time companions to hide.
func newReadPlan(managed map[string]Strategy, others []string, c companions) readPlan {
	names := make([]string, 0, len(managed))
	for name := range managed {
		names = append(names, name)
	}
	sort.Strings(names)

	var p readPlan
	var byStrategy [][]string // family names, in the order of p.groups
	for _, name := range names {
		i := 0
		for i < len(p.groups) && p.groups[i].strategy != managed[name] {
			i++
		}
		if i == len(p.groups) {
			p.groups = append(p.groups, planGroup{strategy: managed[name]})
			byStrategy = append(byStrategy, nil)
		}
		byStrategy[i] = append(byStrategy[i], name)
	}
	dataStart, dataEnd := c.dataColumns()
	companionStart, companionEnd := c.columns()
	for i, fams := range byStrategy {
		p.groups[i].data = selectFamilies(fams, dataStart, dataEnd)
		p.groups[i].companions = selectFamilies(fams, companionStart, companionEnd)
	}

	if others == nil {
		p.others = []bigtable.Filter{bigtable.FamilyFilter(noneOf(names))}
		return p
	}
	sorted := append([]string(nil), others...)
	sort.Strings(sorted)
	for _, name := range sorted {
		p.others = append(p.others, bigtable.ColumnRangeFilter(name, "", ""))
	}
	p.bare = len(p.groups) == 1 && len(p.others) == 0 && !bool(c)
	return p
}

// selectFamilies selects the qualifiers [start, end) of each family, "" for
// an open bound, with no regular expression.
func selectFamilies(families []string, start, end string) bigtable.Filter {
	if len(families) == 1 {
		return bigtable.ColumnRangeFilter(families[0], start, end)
	}
	each := make([]bigtable.Filter, len(families))
	for i, f := range families {
		each[i] = bigtable.ColumnRangeFilter(f, start, end)
	}
	return bigtable.InterleaveFilters(each...)
}

// live returns the filter that passes the cells live at now: the managed
// families' data cells their strategy keeps and every cell of the other
// families passed through.
func (p *readPlan) live(now time.Time) bigtable.Filter {
	if p.bare {
		return p.groups[0].strategy.Filter(now)
	}
	branches := make([]bigtable.Filter, 0, len(p.groups)+len(p.others))
	for _, g := range p.groups {
		branches = append(branches, bigtable.ChainFilters(g.data, g.strategy.Filter(now)))
	}
	branches = append(branches, p.others...)
	if len(branches) == 1 {
		return branches[0]
	}
	return bigtable.InterleaveFilters(branches...)
}

// companions returns the filter that passes the write-time companions of
// the data cells live at now.
func (p *readPlan) companions(now time.Time) bigtable.Filter {
	branches := make([]bigtable.Filter, len(p.groups))
	for i, g := range p.groups {
		branches[i] = bigtable.ChainFilters(g.companions, g.strategy.Filter(now))
	}
	if len(branches) == 1 {
		return branches[0]
	}
	return bigtable.InterleaveFilters(branches...)
}

// noneOf returns an RE2 pattern that fully matches every string except the
// given ones. RE2 has no negative lookahead, so the pattern spells out the
// complement of the set as a trie: at each node a name may end (unless one
// of the set ends there), go on with a byte no name of the set has next, or
// follow a byte that one has.
func noneOf(names []string) string {
	var b strings.Builder
	writeNoneOf(&b, names, 0)
	return b.String()
}

// writeNoneOf writes the pattern for the suffixes, from byte depth on, of
// names that share their first depth bytes.
func writeNoneOf(b *strings.Builder, names []string, depth int) {
	var alts []string
	ends := false
	var next []byte // distinct next bytes, in order (names are sorted)
	for _, n := range names {
		if len(n) == depth {
			ends = true
		} else if c := n[depth]; len(next) == 0 || next[len(next)-1] != c {
			next = append(next, c)
		}
	}
	if !ends {
		alts = append(alts, "")
	}
	if len(next) == 0 {
		alts = append(alts, "(?s:.+)")
	} else {
		var class strings.Builder
		class.WriteString("[^")
		for _, c := range next {
			class.WriteString(quoteByte(c))
		}
		class.WriteString("](?s:.*)")
		alts = append(alts, class.String())
	}
	b.WriteString("(?:")
	for i, a := range alts {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(a)
	}
	for _, c := range next {
		var sub []string
		for _, n := range names {
			if len(n) > depth && n[depth] == c {
				sub = append(sub, n)
			}
		}
		b.WriteByte('|')
		b.WriteString(quoteByte(c))
		writeNoneOf(b, sub, depth+1)
	}
	b.WriteByte(')')
}

// quoteByte spells one byte of a family name for a pattern, inside or
// outside a character class. Family names are letters, digits and "-_.".
func quoteByte(c byte) string {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' {
		return string(c)
	}
	return `\x` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15])
}
