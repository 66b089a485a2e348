package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// A proxy forwards TCP connections to an address until it is cut: then
// it closes every connection it holds and each one it accepts, as a
// network that refuses the server would, until it is restored. The
// outage of scripts/sweep-emulator.sh (OUTAGE=1) is made with one in
// front of the emulator, so that the server keeps its data and its clock
// while the clients cannot reach it.
type proxy struct {
	to string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

func newProxy(to string) *proxy { return &proxy{to: to, conns: map[net.Conn]bool{}} }

// setCut cuts the proxy (true) or restores it (false).
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

// track records c as held, or closes it and returns false when the proxy
// is cut.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

// untrack forgets c and closes it.
func (p *proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

// serve accepts connections on ln until it is closed, and forwards each.
func (p *proxy) serve(ln net.Listener) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		in, err := ln.Accept()
		if err != nil {
			return err
		}
		if !p.track(in) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.forward(in)
		}()
	}
}

// forward copies between in and a new connection to p.to until either
// side ends or the proxy is cut.
func (p *proxy) forward(in net.Conn) {
	defer p.untrack(in)
	out, err := net.DialTimeout("tcp", p.to, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(out) {
		return
	}
	defer p.untrack(out)
	done := make(chan struct{}, 2)
	go func() { io.Copy(out, in); done <- struct{}{} }()
	go func() { io.Copy(in, out); done <- struct{}{} }()
	<-done
}

// proxyCmd runs a proxy from -listen to -to until interrupted: SIGUSR1
// cuts it, SIGUSR2 restores it, and each change is printed with its time.
func proxyCmd(ctx context.Context, fs *flag.FlagSet, stdout io.Writer) func() error {
	listen := fs.String("listen", "127.0.0.1:0", "the address to listen on")
	to := fs.String("to", "", "the address to forward to")
	return func() error {
		if *to == "" {
			return fmt.Errorf("-to: want the address to forward to")
		}
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return err
		}
		p := newProxy(*to)
		fmt.Fprintf(stdout, "proxy %s -> %s\n", ln.Addr(), *to)
		sig := make(chan os.Signal, 4)
		signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM, os.Interrupt)
		defer signal.Stop(sig)
		served := make(chan error, 1)
		go func() { served <- p.serve(ln) }()
		defer func() { ln.Close(); p.setCut(true); <-served }()
		for {
			select {
			case <-ctx.Done():
				return nil
			case err := <-served:
				return err
			case s := <-sig:
				switch s {
				case syscall.SIGUSR1:
					p.setCut(true)
					fmt.Fprintf(stdout, "cut at %s\n", time.Now().UTC().Format(time.RFC3339Nano))
				case syscall.SIGUSR2:
					p.setCut(false)
					fmt.Fprintf(stdout, "restored at %s\n", time.Now().UTC().Format(time.RFC3339Nano))
				default:
					return nil
				}
			}
		}
	}
}
