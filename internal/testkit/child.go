package testkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/bigtable/bttest"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl/internal/emulator"
)

// An emulator in a child process, for the scale tests: its work and its
// heap are then not the client's, which they measure. The child is the
// test binary itself, running one test that calls EmulatorChild.

const (
	childEnv = "CELLTTL_EMULATOR_PROCESS"
	// MaxMessage is the largest gRPC message the child and its clients
	// take, as cmd/emulator allows.
	MaxMessage = 256 << 20
)

// EmulatorChild serves an emulator until standard input closes, when the
// test binary runs as the child of StartEmulatorChild; otherwise it skips
// the test. A package whose tests start a child has a test that calls it.
func EmulatorChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("the emulator child process; runs only when started by StartEmulatorChild")
	}
	srv, err := bttest.NewServer("127.0.0.1:0", grpc.MaxRecvMsgSize(MaxMessage), grpc.MaxSendMsgSize(MaxMessage))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	fmt.Printf("emulator at %s\n", srv.Addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // returns when the parent closes it
}

// StartEmulatorChild starts the test binary as a child process running
// test, which calls EmulatorChild, and returns clients on its emulator and
// a func that stops it (also run at cleanup).
func StartEmulatorChild(t *testing.T, test string) (*emulator.Emulator, func()) {
	t.Helper()
	addr, stop, err := startChild(test)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return emulator.ConnectForTest(t, addr, grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessage), grpc.MaxCallSendMsgSize(MaxMessage))), stop
}

// startChild starts the child running test and returns its emulator's
// address and a func that stops it.
func startChild(test string) (string, func(), error) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var stderr tail
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := sync.OnceFunc(func() {
		stdin.Close()
		_ = cmd.Wait() // the child's exit status says nothing here
	})
	var addr string
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if a, ok := strings.CutPrefix(sc.Text(), "emulator at "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		stop()
		return "", nil, fmt.Errorf("the emulator process (test %s) did not start: %s", test, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // the child's test output
	return addr, stop, nil
}

// A tail keeps the last 4 KiB written to it: a child's standard error, for
// the message when it fails.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - 4096; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
