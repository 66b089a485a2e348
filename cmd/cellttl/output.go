package main

import (
	"encoding/json"
	"fmt"
	"io"
)

// printJSON writes v as indented JSON, for programs and CI gates.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
