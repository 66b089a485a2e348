package ttl

import (
	"fmt"

	"github.com/cellttl/ttl/internal/routing"
)

// Replicated instances: an app profile with multi-cluster routing refuses
// single-row transactions, which Touch, KeepAlive's renewals, conditional
// mutations and read-modify-writes are. The Table turns the server's
// refusal into ErrTransactionNotAllowed, naming the call, the app profile
// and the alternatives.

// WithAppProfile names the app profile the table's client was opened with
// (bigtable.ClientConfig.AppProfile), for the errors that wrap
// ErrTransactionNotAllowed to name it: the bigtable client does not tell.
// It changes nothing else; the client's configuration chooses the
// profile, and "" (the default) leaves the messages to say "the client's
// app profile".
func WithAppProfile(name string) Option {
	return optionFunc(func(c *config) error {
		c.appProfile = name
		return nil
	})
}

// transaction returns err, the result of op's single-row transaction, or,
// when the server refused the transaction for the app profile's routing,
// an error wrapping ErrTransactionNotAllowed and err. It inlines: a call
// that succeeded pays one comparison.
func (t *Table) transaction(err error, op string) error {
	if err != nil {
		return t.refused(err, op)
	}
	return nil
}

// refused returns err, or, when it is the server's refusal of op's
// transaction for routing, wraps it.
func (t *Table) refused(err error, op string) error {
	if !routing.Refused(err) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrTransactionNotAllowed, routing.Explain(op, t.appProfile, "ttl.WithAppProfile"), err)
}
