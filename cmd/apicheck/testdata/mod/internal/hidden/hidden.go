package hidden

// Hidden is in an internal package.
func Hidden() {}
