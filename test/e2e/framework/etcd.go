package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Etcd is a real etcd process (bin/etcd, built from the etcd Go module).
type Etcd struct {
	ClientURL string
	cmd       *exec.Cmd
	exited    chan error
}

// StartEtcd runs a single-member etcd with its data in dir and waits until it
// reports healthy.
func StartEtcd(ctx context.Context, dir string) (*Etcd, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(BinDir(), "etcd"),
		"--name", "default",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default="+peer,
		"--unsafe-no-fsync",
	)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd: %w", err)
	}
	e := &Etcd{ClientURL: client, cmd: cmd, exited: make(chan error, 1)}
	go func() { e.exited <- cmd.Wait() }()

	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-e.exited:
			return false, fmt.Errorf("etcd exited: %v; see %s", err, log.Name())
		default:
		}
		resp, err := http.Get(client + "/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

// Stop terminates etcd.
func (e *Etcd) Stop() {
	_ = e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-e.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
		<-e.exited
	}
}
