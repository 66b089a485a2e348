package ttl

// The README's timeline figures are drawn from the library itself.
//go:generate go run ./cmd/timeline -out docs
