package policy

import (
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl/internal/text"
)

// How a plan and a status travel as JSON: GC policies as Describe spells
// them, kinds of cell as DescribeType does, a loss's durations as Go
// durations ("168h0m0s"), so that a program (or an operator reading the
// cellttl command's -format json) reads what the text output shows.
// Decoding reads them back: a decoded plan is the plan encoded, but for an
// "aggregate" family, whose value type decodes as an AggregateType of
// unknown input and aggregator (DescribeType spells it "aggregate" still).

// statusJSON is a Status as JSON spells it.
type statusJSON struct {
	Family   string `json:"family"`
	Strategy string `json:"strategy"`
	Found    string `json:"found"`
	Want     string `json:"want"`
	Finished string `json:"finished,omitempty"`
	Type     string `json:"type"`
	WantType string `json:"want_type"`
	Exists   bool   `json:"exists"`
	Matches  bool   `json:"matches"`
}

// toJSON returns s as JSON spells it: "missing" for a family that does not
// exist, its type "" then.
func (s Status) toJSON() statusJSON {
	j := statusJSON{Family: s.Family, Strategy: s.Strategy, Found: Describe(s.Found), Want: Describe(s.Want),
		WantType: DescribeType(s.WantType), Exists: s.Exists, Matches: s.Matches}
	if s.Finished != nil {
		j.Finished = Describe(s.Finished)
	}
	if s.Exists {
		j.Type = DescribeType(s.Type)
	}
	return j
}

// status reads a status back from its JSON.
func (j statusJSON) status() (Status, error) {
	s := Status{Family: j.Family, Strategy: j.Strategy, Exists: j.Exists, Matches: j.Matches}
	var err error
	if s.Found, err = Parse(j.Found); err != nil {
		return Status{}, fmt.Errorf("policy: family %q: found: %w", j.Family, err)
	}
	if s.Want, err = Parse(j.Want); err != nil {
		return Status{}, fmt.Errorf("policy: family %q: want: %w", j.Family, err)
	}
	if j.Finished != "" {
		if s.Finished, err = Parse(j.Finished); err != nil {
			return Status{}, fmt.Errorf("policy: family %q: finished: %w", j.Family, err)
		}
	}
	if s.Type, err = parseType(j.Family, j.Type); err != nil {
		return Status{}, err
	}
	if s.WantType, err = parseType(j.Family, j.WantType); err != nil {
		return Status{}, err
	}
	return s, nil
}

// parseType reads a kind of cell as DescribeType spells it ("" too, the
// type of a family that does not exist).
func parseType(family, t string) (bigtable.Type, error) {
	switch t {
	case "", typePlain:
		return nil, nil
	case typeCounter:
		return counterType(), nil
	case typeAggregate:
		return bigtable.AggregateType{}, nil
	}
	return nil, fmt.Errorf("policy: family %q: no such kind of cell: %q; want plain, counter or aggregate", family, t)
}

// MarshalJSON encodes the status with its policies and kinds of cell
// spelled as Describe and DescribeType spell them.
func (s Status) MarshalJSON() ([]byte, error) { return json.Marshal(s.toJSON()) }

// UnmarshalJSON decodes a status that MarshalJSON encoded.
func (s *Status) UnmarshalJSON(b []byte) error {
	var j statusJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	st, err := j.status()
	if err == nil {
		*s = st
	}
	return err
}

// familyPlanJSON is a FamilyPlan as JSON spells it: its status inlined.
type familyPlanJSON struct {
	statusJSON
	Action          Action `json:"action"`
	Rows            int    `json:"rows_lost"`
	Losses          []Loss `json:"losses"`
	Resurfaced      int    `json:"resurfaced_rows"`
	CollectedSooner []Loss `json:"collected_sooner"`
	Refused         bool   `json:"refused"`
	Done            bool   `json:"done"`
}

// MarshalJSON encodes the family's plan, its status inlined.
func (f FamilyPlan) MarshalJSON() ([]byte, error) {
	return json.Marshal(familyPlanJSON{f.Status.toJSON(), f.Action, f.Rows, f.Losses, f.Resurfaced, f.CollectedSooner, f.Refused, f.Done})
}

// UnmarshalJSON decodes a family's plan that MarshalJSON encoded.
func (f *FamilyPlan) UnmarshalJSON(b []byte) error {
	var j familyPlanJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	st, err := j.status()
	if err != nil {
		return err
	}
	*f = FamilyPlan{st, j.Action, j.Rows, j.Losses, j.Resurfaced, j.CollectedSooner, j.Refused, j.Done}
	return nil
}

// lossJSON is a Loss as JSON spells it: the fields its kind leaves zero
// are left out, durations are Go durations.
type lossJSON struct {
	Kind     LossKind      `json:"kind"`
	Rows     int           `json:"rows"`
	From     *time.Time    `json:"from,omitempty"`
	Until    *time.Time    `json:"until,omitempty"`
	Age      text.Duration `json:"age,omitempty"`
	Shift    text.Duration `json:"shift,omitempty"`
	Versions int           `json:"versions,omitempty"`
	Expiries bool          `json:"expiries,omitempty"`
}

// MarshalJSON encodes the loss: its kind by name, the fields its kind
// leaves zero left out, durations such as "168h0m0s".
func (l Loss) MarshalJSON() ([]byte, error) {
	j := lossJSON{Kind: l.Kind, Rows: l.Rows, Age: text.Duration(l.Age), Shift: text.Duration(l.Shift), Versions: l.Versions, Expiries: l.Expiries}
	if !l.From.IsZero() {
		j.From = &l.From
	}
	if !l.Until.IsZero() {
		j.Until = &l.Until
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes a loss that MarshalJSON encoded.
func (l *Loss) UnmarshalJSON(b []byte) error {
	var j lossJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*l = Loss{Kind: j.Kind, Rows: j.Rows, Age: time.Duration(j.Age), Shift: time.Duration(j.Shift), Versions: j.Versions, Expiries: j.Expiries}
	if j.From != nil {
		l.From = *j.From
	}
	if j.Until != nil {
		l.Until = *j.Until
	}
	return nil
}
