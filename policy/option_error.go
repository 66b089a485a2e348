package policy

import "fmt"

// An Option names an option of a tool's that lifts a refusal, as Go
// spells it, such as AllowDataLoss.
type Option string

// AllowDataLoss is Options.AllowDataLoss (and move.Options.AllowDataLoss).
const AllowDataLoss Option = "AllowDataLoss"

// An OptionError is a refusal that an option lifts: Err is the refusal,
// wrapping its sentinel, and Option the option that allows what was
// refused. errors.Is and errors.As see Err through it.
type OptionError struct {
	Err    error
	Option Option
}

// Error returns Err's message, then the option that lifts it.
func (e *OptionError) Error() string { return fmt.Sprintf("%v (allow it with %s)", e.Err, e.Option) }

// Unwrap returns Err.
func (e *OptionError) Unwrap() error { return e.Err }
