package localfleet

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
	dir       string
	args      []string
	cmd       *exec.Cmd
	// exited is closed when etcd exits, with its error in exitErr.
	exited  chan struct{}
	exitErr error
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
	e := &Etcd{ClientURL: client, dir: dir, args: []string{
		"--name", "default",
		"--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "default=" + peer,
		"--unsafe-no-fsync",
	}}
	return e, e.start(ctx)
}

// start runs etcd and waits until it is healthy; its log is appended to
// etcd.log in its directory.
func (e *Etcd) start(ctx context.Context) error {
	log, err := os.OpenFile(filepath.Join(e.dir, "etcd.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(BinDir(), "etcd"), e.args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	e.cmd, e.exited = cmd, make(chan struct{})
	go func() {
		e.exitErr = cmd.Wait()
		close(e.exited)
	}()

	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case <-e.exited:
			return false, fmt.Errorf("etcd exited: %v; see %s", e.exitErr, log.Name())
		default:
		}
		resp, err := http.Get(e.ClientURL + "/health")
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		e.Stop()
	}
	return err
}

// Restart stops etcd and starts it again on the same ports and data.
func (e *Etcd) Restart(ctx context.Context) error {
	e.Stop()
	return e.start(ctx)
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
