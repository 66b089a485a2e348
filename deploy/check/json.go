package check

import "encoding/json"

// jsonArray decodes a JSON array of strings, as the exec form of
// ENTRYPOINT and CMD is written.
func jsonArray(s string, v *[]string) error { return json.Unmarshal([]byte(s), v) }
