package localcluster

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// stopGrace is how long a component gets to exit after SIGTERM. They keep no
// state worth a clean shutdown, so it is short.
const stopGrace = 5 * time.Second

// process is a child process in its own process group, logging to
// <dir>/<name>.log.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error // valid once exited is closed
}

func startProcess(dir, bin string, args ...string) (*process, error) {
	name := filepath.Base(bin)
	log, err := createLog(dir, name)
	if err != nil {
		return nil, err
	}
	// The child writes to its own copy of the descriptor.
	defer log.Close()

	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own group, so that a Ctrl-C aimed at `go test` does not reach it
	// before Stop does, and Stop can kill anything it spawned.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: log.Name(), cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// checkRunning reports a process that died, e.g. on a bad flag.
func (p *process) checkRunning() error {
	select {
	case <-p.exited:
		return fmt.Errorf("%s exited (%v); see %s", p.name, p.err, p.logPath)
	default:
		return nil
	}
}

// stop terminates the process group, killing it if SIGTERM is not enough.
func (p *process) stop() error {
	if err := p.checkRunning(); err != nil {
		return err
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(stopGrace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return nil
	}
}
