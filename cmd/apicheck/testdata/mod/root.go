// Package mod is a fixture: a module's root package.
package mod

import (
	"errors"
	"time"
)

// Level is an enumeration.
type Level int

// The levels.
const (
	Low Level = iota
	High
	hidden
)

// Prefix is an untyped constant from an expression.
const Prefix = base + "x:"

const base = "b"

// Errors.
var (
	ErrBad         = errors.New("bad")
	Default        = Config{}
	Pointer        = &Config{}
	Typed      int = 3
	unexported     = 4
)

// Config is a struct.
type Config struct {
	Name     string
	Timeout  time.Duration
	internal int
	*Embedded
	embeddedLower
}

// Embedded is embedded.
type Embedded struct{}

type embeddedLower struct{}

// Doer is an interface.
type Doer interface {
	Do(ctx, other string, n int) (ok bool, err error)
	Embedded2
	undo()
}

// Embedded2 is an embedded interface.
type Embedded2 interface{ Close() error }

// Alias is an alias.
type Alias = Config

// Box is generic.
type Box[T any, K comparable] struct{ Value T }

// Get is a method of a generic type.
func (b *Box[T, K]) Get() T { return b.Value }

// New makes a Config.
func New(name string, opts ...func(*Config)) (c *Config, err error) { return &Config{Name: name}, nil }

// Map is a generic function.
func Map[T, U any](xs []T, f func(T) U) []U { return nil }

// Run is a method with a value receiver.
func (c Config) Run() {}

func (embeddedLower) Hidden() {}

func helper() {}
