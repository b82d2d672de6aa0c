package join

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func defaultStateDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".fleet/syncers"
	}
	return filepath.Join(home, ".fleet", "syncers")
}

func memberDir(stateDir, name string) string { return filepath.Join(stateDir, name) }
func logPath(stateDir, name string) string {
	return filepath.Join(memberDir(stateDir, name), "syncer.log")
}
func pidPath(stateDir, name string) string {
	return filepath.Join(memberDir(stateDir, name), "syncer.pid")
}

// syncerBinary finds fleet-syncer next to this plugin, else on PATH.
func syncerBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		candidate := filepath.Join(filepath.Dir(self), "fleet-syncer")
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	path, err := exec.LookPath("fleet-syncer")
	if err != nil {
		return "", fmt.Errorf("fleet-syncer not found next to kubectl-fleet or on PATH; run `make build`")
	}
	return path, nil
}

// startLocalSyncer runs fleet-syncer in the background, detached from this
// command, replacing a syncer started earlier for the same member.
func startLocalSyncer(stateDir, name, memberKubeconfig string, hubKubeconfig []byte, metricsAddress string, verbosity int) error {
	bin, err := syncerBinary()
	if err != nil {
		return err
	}
	dir := memberDir(stateDir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := stopLocalSyncer(stateDir, name); err != nil {
		return err
	}
	hubPath := filepath.Join(dir, "hub.kubeconfig")
	if err := os.WriteFile(hubPath, hubKubeconfig, 0o600); err != nil {
		return err
	}
	memberPath, err := filepath.Abs(memberKubeconfig)
	if err != nil {
		return err
	}
	log, err := os.OpenFile(logPath(stateDir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(bin, "--hub-kubeconfig", hubPath, "--member-kubeconfig", memberPath, "--member-name", name,
		"--metrics-bind-address", metricsAddress, "--v", strconv.Itoa(verbosity))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting fleet-syncer: %w", err)
	}
	if err := os.WriteFile(pidPath(stateDir, name), []byte(strconv.Itoa(cmd.Process.Pid)), 0o600); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// stopLocalSyncer stops a syncer started by `join --run`, if there is one.
func stopLocalSyncer(stateDir, name string) error {
	raw, err := os.ReadFile(pidPath(stateDir, name))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("bad pid file %s: %w", pidPath(stateDir, name), err)
	}
	if !isSyncerOf(pid, name) {
		// The syncer is gone and its pid may be another process now (or
		// the pid is of another PID namespace: fleet-dev runs its own).
		return os.Remove(pidPath(stateDir, name))
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err == nil {
		for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return os.Remove(pidPath(stateDir, name))
}

// isSyncerOf tells whether process pid is the syncer of member name.
func isSyncerOf(pid int, name string) bool {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return false
	}
	args := strings.Split(string(raw), "\x00")
	i := slices.Index(args, "--member-name")
	return filepath.Base(args[0]) == "fleet-syncer" && i >= 0 && i+1 < len(args) && args[i+1] == name
}
