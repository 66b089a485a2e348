package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// echoServer serves connections that echo each line back.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through addr and returns what came back, or the
// error.
func roundTrip(c net.Conn) (string, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func TestProxyCutAndRestore(t *testing.T) {
	to := echoServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(to)
	served := make(chan error, 1)
	go func() { served <- p.serve(ln) }()
	defer func() { ln.Close(); <-served }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c); err != nil || got != "ping\n" {
		t.Fatalf("before the cut: %q, %v", got, err)
	}
	p.setCut(true)
	if got, err := roundTrip(c); err == nil {
		t.Fatalf("a held connection after the cut: %q, want an error", got)
	}
	c2, err := net.Dial("tcp", ln.Addr().String())
	if err == nil {
		if got, err := roundTrip(c2); err == nil {
			t.Fatalf("a new connection during the cut: %q, want an error", got)
		}
		c2.Close()
	}
	p.setCut(false)
	c3, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3); err != nil || got != "ping\n" {
		t.Fatalf("after the restore: %q, %v", got, err)
	}
}

func TestProxyUnreachableTarget(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(dead)
	served := make(chan error, 1)
	go func() { served <- p.serve(front) }()
	defer func() { front.Close(); <-served }()
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c); err == nil {
		t.Fatalf("through a proxy to nothing: %q, want an error", got)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until out holds want, or fails.
func waitFor(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestProxyCommand(t *testing.T) {
	to := echoServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	cmd := proxyCmd(ctx, fs, &out)
	if err := fs.Parse([]string{"-to", to}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd() }()
	waitFor(t, &out, "proxy 127.0.0.1:")
	syscall.Kill(syscall.Getpid(), syscall.SIGUSR1)
	waitFor(t, &out, "cut at ")
	syscall.Kill(syscall.Getpid(), syscall.SIGUSR2)
	waitFor(t, &out, "restored at ")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"proxy"}, nil, io.Discard, &stderr); code != 1 || !strings.Contains(stderr.String(), "-to") {
		t.Errorf("proxy without -to: exit %d, %q", code, stderr.String())
	}
}
