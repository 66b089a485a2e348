// Package routing recognises the server's refusal of a single-row
// transaction (CheckAndMutateRow, ReadModifyWriteRow) by an app profile
// with multi-cluster routing, and says what to do about it, for the
// packages that send such transactions.
package routing

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// refusal is the server's message, lower-cased: "Single-row transactions
// are not allowed by this app profile", with a prefix naming the field.
const refusal = "single-row transactions are not allowed"

// Refused reports whether err is the server's refusal of a single-row
// transaction for the app profile's routing: a FailedPrecondition whose
// message says so. Any other error, FailedPrecondition included, is not.
func Refused(err error) bool {
	if err == nil {
		return false
	}
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return false
	}
	s := se.GRPCStatus()
	return s.Code() == codes.FailedPrecondition && strings.Contains(strings.ToLower(s.Message()), refusal)
}

// Explain says, for an error wrapping the refusal, which operation needs a
// single-row transaction, under which app profile, and what to use
// instead. profile is the app profile's name, "" when the caller did not
// say it; option is how the caller could have named it (ttl.WithAppProfile),
// "" for none.
func Explain(op, profile, option string) string {
	p := "the client's app profile (bigtable.ClientConfig.AppProfile)"
	switch {
	case profile == "" && option != "":
		p = "the client's app profile (bigtable.ClientConfig.AppProfile; name it with " + option + " to see it here)"
	case profile != "":
		p = fmt.Sprintf("app profile %q", profile)
	}
	return fmt.Sprintf("%s needs a single-row transaction, which %s refuses: its routing is multi-cluster. "+
		"Open the table on a client whose app profile has single-cluster routing for this call, "+
		"or use calls that need no transaction: Set and Replace (blind writes), a counter's Add", op, p)
}
