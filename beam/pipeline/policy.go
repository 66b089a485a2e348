package pipeline

import (
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
)

// gcRule is a family's GC policy as plain data. The audit reads the
// table's GC policies once, when the pipeline is built, and its DoFn
// carries them to the workers in this form (bigtable.GCPolicy is an
// interface, which a DoFn's fields cannot carry), so that every shard is
// judged by the same policies.
type gcRule struct {
	// Kind is "none", "maxage", "maxversions", "union" or "intersection".
	Kind        string        `json:"kind"`
	MaxAge      time.Duration `json:"max_age,omitempty"`
	MaxVersions int           `json:"max_versions,omitempty"`
	Children    []gcRule      `json:"children,omitempty"`
}

// encodePolicy returns p as a gcRule; nil is "none", as NewAudit takes it.
func encodePolicy(p bigtable.GCPolicy) (gcRule, error) {
	children := func(kind string, ps []bigtable.GCPolicy) (gcRule, error) {
		r := gcRule{Kind: kind, Children: make([]gcRule, len(ps))}
		for i, c := range ps {
			var err error
			if r.Children[i], err = encodePolicy(c); err != nil {
				return gcRule{}, err
			}
		}
		return r, nil
	}
	switch p := p.(type) {
	case nil:
		return gcRule{Kind: "none"}, nil
	case bigtable.MaxAgeGCPolicy:
		return gcRule{Kind: "maxage", MaxAge: time.Duration(p)}, nil
	case bigtable.MaxVersionsGCPolicy:
		return gcRule{Kind: "maxversions", MaxVersions: int(p)}, nil
	case bigtable.UnionGCPolicy:
		return children("union", p.Children)
	case bigtable.IntersectionGCPolicy:
		return children("intersection", p.Children)
	}
	if bigtable.GetPolicyType(p) == bigtable.PolicyUnspecified {
		return gcRule{Kind: "none"}, nil
	}
	return gcRule{}, fmt.Errorf("pipeline: GC policy %q of an unknown kind (%T)", p, p)
}

// policy returns the GC policy r encodes.
func (r gcRule) policy() (bigtable.GCPolicy, error) {
	children := func() ([]bigtable.GCPolicy, error) {
		ps := make([]bigtable.GCPolicy, len(r.Children))
		for i, c := range r.Children {
			var err error
			if ps[i], err = c.policy(); err != nil {
				return nil, err
			}
		}
		return ps, nil
	}
	switch r.Kind {
	case "none":
		return bigtable.NoGcPolicy(), nil
	case "maxage":
		return bigtable.MaxAgeGCPolicy(r.MaxAge), nil
	case "maxversions":
		return bigtable.MaxVersionsGCPolicy(r.MaxVersions), nil
	case "union":
		ps, err := children()
		return bigtable.UnionGCPolicy{Children: ps}, err
	case "intersection":
		ps, err := children()
		return bigtable.IntersectionGCPolicy{Children: ps}, err
	}
	return nil, fmt.Errorf("pipeline: GC rule of unknown kind %q", r.Kind)
}

// encodePolicies encodes the GC policies of a table's families as JSON: a
// string, since Beam cannot infer a schema for a recursive type such as
// gcRule in a DoFn's fields.
func encodePolicies(ps map[string]bigtable.GCPolicy) (string, error) {
	rules := make(map[string]gcRule, len(ps))
	for name, p := range ps {
		r, err := encodePolicy(p)
		if err != nil {
			return "", fmt.Errorf("family %q: %w", name, err)
		}
		rules[name] = r
	}
	b, err := json.Marshal(rules)
	return string(b), err
}

// decodePolicies returns the GC policies encodePolicies encoded.
func decodePolicies(text string) (map[string]bigtable.GCPolicy, error) {
	var rules map[string]gcRule
	if err := json.Unmarshal([]byte(text), &rules); err != nil {
		return nil, fmt.Errorf("GC policies %q: %w", text, err)
	}
	out := make(map[string]bigtable.GCPolicy, len(rules))
	for name, r := range rules {
		p, err := r.policy()
		if err != nil {
			return nil, fmt.Errorf("family %q: %w", name, err)
		}
		out[name] = p
	}
	return out, nil
}
