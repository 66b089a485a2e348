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

// printReport prints a report, as JSON with -format json and with render
// otherwise, and returns exitOK, or the status of a report that could not
// be written.
func printReport[R any](c *config, stdout, stderr io.Writer, name string, r R, render func(io.Writer, R)) int {
	if !c.format.json {
		render(stdout, r)
		return exitOK
	}
	if err := printJSON(stdout, r); err != nil {
		return fail(stderr, name, err)
	}
	return exitOK
}
