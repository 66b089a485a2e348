//go:build linux

package move_test

import (
	"os/exec"
	"syscall"
)

// e2eDieWithParent has the kernel kill the emulator process when the test
// process dies without running its cleanups (a timeout, a crash).
func e2eDieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
