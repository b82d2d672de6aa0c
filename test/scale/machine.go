package main

import (
	"crypto/sha256"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// machineCheck times a fixed single-threaded workload (SHA-256 of 256 MiB)
// in CPU seconds of its thread, so that a run's CPU figures (the idle
// hub's above all) can be read against how fast the machine was: this
// virtual machine's CPU accounting shows no steal time, and the same hub
// has taken from 1 to 7 s of CPU a minute at rest at different hours.
func machineCheck() (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	buf := make([]byte, 1<<20)
	before, err := threadCPU()
	if err != nil {
		return 0, err
	}
	h := sha256.New()
	for i := 0; i < 256; i++ {
		h.Write(buf)
	}
	h.Sum(nil)
	after, err := threadCPU()
	return after - before, err
}

func threadCPU() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
