// Package sub is a fixture: a package below the root.
package sub

// F is a function.
func F() {}
