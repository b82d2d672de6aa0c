package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// fleet-dev runs its hub, member clusters and syncers in a PID namespace of
// their own, so that killing fleet-dev, even with SIGKILL, leaves nothing
// running: the kernel kills a PID namespace's processes when its first
// process (its init) dies, and that init dies with fleet-dev. Three roles,
// one binary:
//
//	fleet-dev (supervisor) ── init (pid 1 of the namespace) ── fleet-dev (worker)
//	                                                          ├─ fleet-hub, member clusters
//	                                                          └─ syncers (orphaned by `join --run`, adopted by init)
//
// The supervisor forwards SIGINT and SIGTERM, so that a normal stop is
// still graceful (the worker stops what it started); init reaps every
// process that ends in the namespace.
const roleEnv = "FLEET_DEV_ROLE"

const (
	roleInit   = "init"
	roleWorker = "worker"
)

// supervise runs the worker under an init in a new PID namespace and
// returns its exit code; ok is false when this machine cannot create one
// (no privilege), and fleet-dev then runs in-process.
func supervise() (code int, ok bool) {
	self, err := os.Executable()
	if err != nil {
		return 0, false
	}
	// Signals that come while the namespace starts are passed on after.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}
	init, err := start(self, roleInit, attr)
	if err != nil {
		// No privilege (EPERM), or PID namespaces disabled (ENOSPC, EINVAL).
		signal.Stop(signals)
		say("fleet-dev cannot create a PID namespace here (%v); if it is killed with SIGKILL, stop what it started with `pkill -f %s`", err, self)
		return 0, false
	}
	return forwardAndWait(init, signals), true
}

// runInit is pid 1 of the namespace: it starts the worker, passes it the
// signals it gets, reaps every process that ends, and exits with the
// worker, which takes the namespace's other processes down with it.
func runInit() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// As pid 1, init ignores every signal it has no handler for: the
	// handler comes first.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	worker, err := start(self, roleWorker, &syscall.SysProcAttr{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		for s := range signals {
			_ = worker.Signal(s)
		}
	}()
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 1
		}
		if pid == worker.Pid {
			return exitCode(status)
		}
	}
}

func start(self, role string, attr *syscall.SysProcAttr) (*os.Process, error) {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, roleEnv+"=") })
	return os.StartProcess(self, os.Args, &os.ProcAttr{
		Env:   append(env, roleEnv+"="+role),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
		Sys:   attr,
	})
}

// forwardAndWait passes the signals to p until it exits.
func forwardAndWait(p *os.Process, signals <-chan os.Signal) int {
	go func() {
		for s := range signals {
			_ = p.Signal(s)
		}
	}()
	st, err := p.Wait()
	if err != nil {
		return 1
	}
	return exitCode(st.Sys().(syscall.WaitStatus))
}

func exitCode(s syscall.WaitStatus) int {
	if s.Signaled() {
		return 128 + int(s.Signal())
	}
	return s.ExitStatus()
}
