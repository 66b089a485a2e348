package terraform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cellttl/ttl"
)

// ErrNotTerraform reports input that is not the JSON of a plan or a state
// as terraform show -json prints it. Errors that wrap it wrap
// ttl.ErrInvalidOption too.
var ErrNotTerraform = errors.New("terraform: not a plan or state as terraform show -json prints it")

// A resource is one instance of a google_bigtable_gc_policy or
// google_bigtable_table resource in a plan or a state: its values before
// and after the plan (a state's are after), and which values after are
// known only once applied.
type resource struct {
	address string
	typ     string
	// actions are the plan's actions ("create", "update", "delete",
	// "no-op", "forget"; ["delete", "create"] for a replacement); nil in
	// a state.
	actions []string
	before  map[string]any
	after   map[string]any
	unknown any // after_unknown: true, or a tree of maps and lists of true
}

// A show is what terraform show -json printed: the resources of a plan
// (its resource_changes) or of a state (values, every module).
type show struct {
	plan      bool
	resources []resource
}

// The parts of terraform show -json that are read.
type (
	showJSON struct {
		FormatVersion   *string         `json:"format_version"`
		Values          *valuesJSON     `json:"values"`
		PlannedValues   json.RawMessage `json:"planned_values"`
		ResourceChanges []changeJSON    `json:"resource_changes"`
		ProviderSchemas json.RawMessage `json:"provider_schemas"`
	}
	valuesJSON struct {
		RootModule *moduleJSON `json:"root_module"`
	}
	moduleJSON struct {
		Resources    []stateResourceJSON `json:"resources"`
		ChildModules []moduleJSON        `json:"child_modules"`
	}
	stateResourceJSON struct {
		Address string         `json:"address"`
		Mode    string         `json:"mode"`
		Type    string         `json:"type"`
		Values  map[string]any `json:"values"`
	}
	changeJSON struct {
		Address string `json:"address"`
		Mode    string `json:"mode"`
		Type    string `json:"type"`
		Change  struct {
			Actions      []string       `json:"actions"`
			Before       map[string]any `json:"before"`
			After        map[string]any `json:"after"`
			AfterUnknown any            `json:"after_unknown"`
		} `json:"change"`
	}
)

// readShow reads the JSON of terraform show -json, of a plan or a state,
// and keeps its google_bigtable_gc_policy and google_bigtable_table
// resources (managed ones: not data sources).
func readShow(r io.Reader) (*show, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc showJSON
	if err := dec.Decode(&doc); err != nil {
		return nil, notTerraform("it is not JSON of the expected shape: %v", err)
	}
	if dec.More() {
		return nil, notTerraform("it holds more than one JSON value")
	}
	switch {
	case doc.FormatVersion == nil:
		return nil, notTerraform("it has no format_version")
	case len(doc.ProviderSchemas) > 0:
		return nil, notTerraform("it is a provider schema (terraform providers schema -json)")
	case !strings.HasPrefix(*doc.FormatVersion, "1."):
		return nil, notTerraform("format_version %q: only 1.x is read", *doc.FormatVersion)
	}
	s := &show{plan: len(doc.PlannedValues) > 0 || doc.ResourceChanges != nil}
	if s.plan {
		for _, c := range doc.ResourceChanges {
			if c.Mode == "managed" && (c.Type == gcPolicyType || c.Type == tableType) {
				s.resources = append(s.resources, resource{address: c.Address, typ: c.Type, actions: c.Change.Actions,
					before: c.Change.Before, after: c.Change.After, unknown: c.Change.AfterUnknown})
			}
		}
		return s, nil
	}
	if doc.Values != nil && doc.Values.RootModule != nil {
		s.addModule(*doc.Values.RootModule)
	}
	return s, nil
}

// addModule adds the resources of a state's module and its children.
func (s *show) addModule(m moduleJSON) {
	for _, r := range m.Resources {
		if r.Mode == "managed" && (r.Type == gcPolicyType || r.Type == tableType) {
			s.resources = append(s.resources, resource{address: r.Address, typ: r.Type, before: r.Values, after: r.Values})
		}
	}
	for _, c := range m.ChildModules {
		s.addModule(c)
	}
}

func notTerraform(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ttl.ErrInvalidOption, ErrNotTerraform, fmt.Sprintf(format, args...))
}

// str returns the string at key of values, "" when absent or not a
// string.
func str(values map[string]any, key string) string {
	s, _ := values[key].(string)
	return s
}

// list returns the list at key of values, nil when absent or not a list.
func list(values map[string]any, key string) []any {
	l, _ := values[key].([]any)
	return l
}

// unknownAt reports whether the value at path (map keys and list indexes)
// is known only after apply, by after_unknown: true at the path or above
// it.
func unknownAt(u any, path ...any) bool {
	for _, p := range path {
		if b, ok := u.(bool); ok {
			return b
		}
		switch p := p.(type) {
		case string:
			m, _ := u.(map[string]any)
			u = m[p]
		case int:
			l, _ := u.([]any)
			if p >= len(l) {
				return false
			}
			u = l[p]
		}
	}
	b, _ := u.(bool)
	return b
}
