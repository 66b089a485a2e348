package text

import "fmt"

// Server says which Bigtable a program talks to and where that came from,
// for a message about a server that cannot be reached: the emulator at
// emulatorHost (the value of BIGTABLE_EMULATOR_HOST) when it is set,
// otherwise Cloud Bigtable by project and instance.
func Server(emulatorHost, project, instance string) string {
	if emulatorHost != "" {
		return "the emulator at BIGTABLE_EMULATOR_HOST=" + emulatorHost
	}
	return fmt.Sprintf("Cloud Bigtable, project %q instance %q (-project, -instance)", project, instance)
}
