package rules

import "errors"

// The sentinels of the ground floor. Package ttl re-exports each under the
// same name (ttl.ErrInvalidOption is ErrInvalidOption), so that the
// packages below ttl, which may not import it, return errors a caller tests
// with errors.Is against ttl's names. Their documentation is ttl's.
var (
	// ErrInvalidStrategy is ttl.ErrInvalidStrategy.
	ErrInvalidStrategy = errors.New("ttl: invalid strategy")
	// ErrInvalidOption is ttl.ErrInvalidOption.
	ErrInvalidOption = errors.New("ttl: invalid option")
	// ErrUnknownFamily is ttl.ErrUnknownFamily.
	ErrUnknownFamily = errors.New("ttl: unknown column family")
	// ErrNilArgument is ttl.ErrNilArgument.
	ErrNilArgument = errors.New("ttl: nil argument")
)
