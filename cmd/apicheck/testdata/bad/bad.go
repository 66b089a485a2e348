package bad

// V has a type the syntax does not say.
var V = compute()

func compute() int { return 1 }
