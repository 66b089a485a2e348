package nested

// N is in a nested module.
func N() {}
