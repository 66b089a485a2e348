package mod

func TestSomething() {}

// NotListed is in a test file.
func NotListed() {}
