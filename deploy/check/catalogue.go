package check

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Catalogue is the set of Prometheus metric names the instruments of a
// catalogue are exposed as: each name mapped to the instrument it comes
// from.
type Catalogue map[string]string

// Names returns the catalogue's metric names, sorted.
func (c Catalogue) Names() []string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// unitSuffixes maps the UCUM units the catalogue uses to the suffix
// OpenTelemetry's Prometheus exporter appends; units in braces append none.
var unitSuffixes = map[string]string{
	"s":  "_seconds",
	"ms": "_milliseconds",
	"By": "_bytes",
	"1":  "_ratio",
	"":   "",
}

// ErrCatalogue reports a catalogue (docs/metrics.md) that cannot be read
// as instrument tables: a kind or unit with no known translation, or no
// instrument at all.
var ErrCatalogue = errors.New("catalogue")

var backticked = regexp.MustCompile("`([^`]*)`")

// ParseCatalogue reads the instrument tables of a Markdown catalogue (the
// tables whose header has the columns instrument, unit and kind) and
// returns the metric names OpenTelemetry's Prometheus exporter, with
// underscore escaping and suffixes, exposes them as: dots become
// underscores, the unit adds _seconds (s) or _bytes (By), a counter adds
// _total, a histogram is its _bucket, _sum and _count series. It fails,
// with ErrCatalogue, on a kind or unit it has no translation for.
func ParseCatalogue(md []byte) (Catalogue, error) {
	cat := Catalogue{}
	var errs []error
	inst, unit, kind := -1, -1, -1
	sc := bufio.NewScanner(bytes.NewReader(md))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(text, "|") {
			inst, unit, kind = -1, -1, -1
			continue
		}
		cells := strings.Split(strings.Trim(text, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if inst < 0 {
			for i, c := range cells {
				switch c {
				case "instrument":
					inst = i
				case "unit":
					unit = i
				case "kind":
					kind = i
				}
			}
			if unit < 0 || kind < 0 {
				inst = -1
			}
			continue
		}
		if strings.HasPrefix(cells[0], "---") || len(cells) <= max(inst, unit, kind) {
			continue
		}
		name := unquote(cells[inst])
		if name == "" {
			continue
		}
		names, err := promNames(name, unquote(cells[unit]), cells[kind])
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", line, err))
			continue
		}
		for _, n := range names {
			cat[n] = name
		}
	}
	if len(cat) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%w: no instrument table (columns instrument, unit, kind)", ErrCatalogue))
	}
	return cat, errors.Join(errs...)
}

// unquote returns the text between a cell's first backticks, or the cell.
func unquote(cell string) string {
	if m := backticked.FindStringSubmatch(cell); m != nil {
		return m[1]
	}
	return cell
}

// promNames returns the metric names an instrument is exposed as.
func promNames(name, unit, kind string) ([]string, error) {
	base := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == ':' {
			return r
		}
		return '_'
	}, name)
	suffix, ok := unitSuffixes[unit]
	if strings.HasPrefix(unit, "{") && strings.HasSuffix(unit, "}") {
		suffix, ok = "", true
	}
	if !ok {
		return nil, fmt.Errorf("%w: instrument %s: unit %q has no known Prometheus suffix", ErrCatalogue, name, unit)
	}
	if !strings.HasSuffix(base, suffix) {
		base += suffix
	}
	switch kind {
	case "counter":
		return []string{base + "_total"}, nil
	case "histogram":
		return []string{base + "_bucket", base + "_sum", base + "_count"}, nil
	case "gauge", "updowncounter", "up-down counter":
		return []string{base}, nil
	}
	return nil, fmt.Errorf("%w: instrument %s: kind %q is none of counter, histogram, gauge, updowncounter", ErrCatalogue, name, kind)
}
