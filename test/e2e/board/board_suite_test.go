package board

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// The suite runs one hub, three real member clusters (a canary and two
// prod), one board served by `kubectl fleet board` as the platform admin,
// and one headless Chromium that the specs drive.
var (
	hub      *localfleet.Hub
	members  framework.Members
	scheme   = framework.NewScheme()
	dir      string
	boardURL string
	// adminLink signs the platform admin in, once.
	adminLink string
	browser   context.Context
	// hubBoardURL is the board the hub serves itself (--board).
	hubBoardURL string
)

const (
	timeout  = 2 * time.Minute
	interval = 250 * time.Millisecond
)

func TestBoard(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Board suite")
}

var _ = BeforeSuite(func(ctx SpecContext) {
	SetDefaultEventuallyTimeout(timeout)
	SetDefaultEventuallyPollingInterval(interval)
	dir = framework.SuiteDir("fleet-board-e2e-")
	browser = startBrowser()
	ports, err := localfleet.FreePorts(1)
	Expect(err).NotTo(HaveOccurred())
	hubBoardURL = fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	hub, members = framework.StartFleet(ctx, "fleet-board-e2e-", []string{"--board", "--board-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[0])}, []localfleet.MemberSpec{
		{Name: "member-1", Labels: map[string]string{"env": "canary"}, Nodes: localfleet.Nodes("m1", 1, "4", "8Gi", nil)},
		{Name: "member-2", Labels: map[string]string{"env": "prod", "region": "eastus"}, Nodes: localfleet.Nodes("m2", 1, "4", "8Gi", nil)},
		{Name: "member-3", Labels: map[string]string{"env": "prod", "region": "westus"}, Nodes: localfleet.Nodes("m3", 1, "4", "8Gi", nil)},
	})
	boardURL, adminLink = startBoard()
}, NodeTimeout(10*time.Minute))

// startBrowser starts headless Chromium for the suite. Without it the
// suite fails: a browser spec never passes by being skipped.
func startBrowser() context.Context {
	tab, stop, err := framework.StartChromium(filepath.Join(dir, "chromium"))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(stop)
	return tab
}

var linkLine = regexp.MustCompile(`http://(127\.0\.0\.1:\d+)(/login\?token=\S+)`)

// startBoard runs `kubectl fleet board` as the platform admin in
// root:fleet on a free port and reads the link it prints.
func startBoard() (string, string) {
	cmd := exec.Command(filepath.Join(localfleet.BinDir(), "kubectl-fleet"), "board", "--address", "127.0.0.1:0",
		"--kubeconfig", hub.KubeconfigPath(), "--server", hub.Config("root:fleet").Host)
	out, err := cmd.StdoutPipe()
	Expect(err).NotTo(HaveOccurred())
	logFile, err := os.Create(filepath.Join(dir, "board.log"))
	Expect(err).NotTo(HaveOccurred())
	cmd.Stderr = logFile
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		logFile.Close()
	})
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		GinkgoWriter.Println("board:", lines.Text())
		if m := linkLine.FindStringSubmatch(lines.Text()); m != nil {
			go func() {
				for lines.Scan() {
					GinkgoWriter.Println("board:", lines.Text())
				}
			}()
			return "http://" + m[1], "http://" + m[1] + m[2]
		}
	}
	Fail(fmt.Sprintf("kubectl fleet board printed no link (its log: %s)", filepath.Join(dir, "board.log")))
	return "", ""
}
