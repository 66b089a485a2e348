package main

// Exported is in a main package.
func Exported() {}

func main() {}
