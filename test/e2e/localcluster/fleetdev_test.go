package localcluster_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/fleetplane/fleetplane/internal/localfleet"
)

// processes maps each running process to its parent and state, from /proc.
func processes() map[int][2]string {
	out := map[int][2]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces.
		fields := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:]))
		if len(fields) > 1 {
			out[pid] = [2]string{fields[1], fields[0]}
		}
	}
	return out
}

// descendants lists the live processes below pid.
func descendants(pid int) []int {
	procs := processes()
	var out []int
	var walk func(int)
	walk = func(parent int) {
		for p, v := range procs {
			if v[0] == strconv.Itoa(parent) {
				out = append(out, p)
				walk(p)
			}
		}
	}
	walk(pid)
	return out
}

// running tells which of pids still run (zombies do not).
func running(pids []int) []int {
	procs := processes()
	var out []int
	for _, p := range pids {
		if v, ok := procs[p]; ok && v[1] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

var _ = Describe("fleet-dev", func() {
	It("leaves nothing running when it is killed with SIGKILL: hub, member cluster and syncer go with it", func() {
		ports, err := localfleet.FreePorts(1)
		Expect(err).NotTo(HaveOccurred())
		cmd := exec.Command(filepath.Join(localfleet.BinDir(), "fleet-dev"), "--members", "1",
			"--root-dir", filepath.Join(GinkgoT().TempDir(), "fleet"), "--secure-port", strconv.Itoa(ports[0]))
		// From another directory: it finds the binaries next to itself.
		cmd.Dir = GinkgoT().TempDir()
		session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(session.Kill)
		// The next steps go to stdout, progress to stderr.
		Eventually(session.Out, 5*time.Minute).Should(gbytes.Say("Press Ctrl-C to stop everything"))
		Expect(string(session.Out.Contents())).To(ContainSubstring("export PATH="+localfleet.BinDir()+":$PATH"), "next steps name absolute paths")

		started := descendants(cmd.Process.Pid)
		var names []string
		for _, p := range started {
			if comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "comm")); err == nil {
				names = append(names, strings.TrimSpace(string(comm)))
			}
		}
		Expect(names).To(ContainElements("fleet-hub", "kube-apiserver", "etcd", "fleet-syncer"), "what fleet-dev runs")

		Expect(cmd.Process.Signal(syscall.SIGKILL)).To(Succeed())
		Eventually(func() []int { return running(started) }, time.Minute).Should(BeEmpty(), "processes left running after fleet-dev was killed")
	})
})
