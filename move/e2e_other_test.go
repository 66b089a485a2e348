//go:build !linux

package move_test

import "os/exec"

// e2eDieWithParent does nothing where the kernel cannot kill a child with
// its parent: the test's cleanup stops the emulator.
func e2eDieWithParent(*exec.Cmd) {}
