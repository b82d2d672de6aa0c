package localfleet

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/localcluster"
)

// Member is a local member cluster joined to a hub, with its syncer running
// on this machine (started by `kubectl fleet join --run`).
type Member struct {
	Name    string
	Labels  map[string]string
	Cluster *localcluster.Cluster
	// StateDir is join's --state-dir: the syncer's kubeconfig, log and pid.
	StateDir string
	// MetricsAddress is where its syncer serves metrics (host:port); Join
	// picks a free port when it is empty.
	MetricsAddress string
	// HeartbeatSeconds is the syncer's heartbeat period; 0 is 5, which
	// the suites use to see health changes quickly.
	HeartbeatSeconds int
	// LogVerbosity is the syncer's -v.
	LogVerbosity int
}

// MetricsURL is where m's syncer serves its Prometheus metrics.
func (m *Member) MetricsURL() string { return "http://" + m.MetricsAddress + "/metrics" }

// MemberSpec describes a member to start and join.
type MemberSpec struct {
	Name   string
	Labels map[string]string
	Nodes  []localcluster.NodeSpec
	// HeartbeatSeconds is the syncer's heartbeat period; 0 is 5.
	HeartbeatSeconds int
	// LogVerbosity is the syncer's -v.
	LogVerbosity int
}

// Nodes describes n nodes named <prefix>-a, <prefix>-b, ... with the given
// capacity and labels.
func Nodes(prefix string, n int, cpu, memory string, labels map[string]string) []localcluster.NodeSpec {
	var out []localcluster.NodeSpec
	for i := 0; i < n; i++ {
		out = append(out, localcluster.NodeSpec{Name: prefix + "-" + string(rune('a'+i)), CPU: cpu, Memory: memory, Labels: labels})
	}
	return out
}

// StartMembers starts local member clusters and joins each to the hub with the
// real CLI, one after the other (two cores: starting them in parallel is not
// faster).
func (h *Hub) StartMembers(ctx context.Context, dir string, specs []MemberSpec) ([]*Member, error) {
	var members []*Member
	for _, spec := range specs {
		c, err := localcluster.Start(ctx, localcluster.Options{
			Name: spec.Name, Nodes: spec.Nodes, BinDir: BinDir(), Dir: filepath.Join(dir, spec.Name),
		})
		if err != nil {
			return members, fmt.Errorf("starting member cluster %s: %w", spec.Name, err)
		}
		m := &Member{Name: spec.Name, Labels: spec.Labels, Cluster: c, StateDir: filepath.Join(dir, "syncers"), HeartbeatSeconds: spec.HeartbeatSeconds, LogVerbosity: spec.LogVerbosity}
		members = append(members, m)
		if err := h.Join(ctx, m); err != nil {
			return members, err
		}
	}
	return members, nil
}

// Join runs `kubectl fleet join --run` for m.
func (h *Hub) Join(ctx context.Context, m *Member) error {
	if m.MetricsAddress == "" {
		ports, err := FreePorts(1)
		if err != nil {
			return err
		}
		m.MetricsAddress = "127.0.0.1:" + strconv.Itoa(ports[0])
	}
	args := []string{"join", m.Name, "--member-kubeconfig", m.Cluster.KubeconfigPath, "--run",
		"--state-dir", m.StateDir, "--heartbeat-period-seconds", strconv.Itoa(cmp.Or(m.HeartbeatSeconds, 5)), "--metrics-bind-address", m.MetricsAddress, "--syncer-verbosity", strconv.Itoa(m.LogVerbosity)}
	if len(m.Labels) > 0 {
		args = append(args, "--labels", joinLabels(m.Labels))
	}
	return h.Fleet(ctx, args...)
}

// Unjoin runs `kubectl fleet unjoin` for m.
func (h *Hub) Unjoin(ctx context.Context, m *Member) error {
	return h.Fleet(ctx, "unjoin", m.Name, "--state-dir", m.StateDir)
}

// Fleet runs the kubectl-fleet plugin against the hub as an admin.
func (h *Hub) Fleet(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(BinDir(), "kubectl-fleet"), append(args, "--kubeconfig", h.KubeconfigPath())...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl fleet %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func joinLabels(l map[string]string) string {
	var parts []string
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// WaitMemberReady waits until the MemberCluster is Joined and Healthy and its
// syncer has reported the node count and resource usage, so that the
// scheduler sees it as a scheduling candidate with all its properties.
func (h *Hub) WaitMemberReady(ctx context.Context, name string) error {
	s := runtime.NewScheme()
	if err := clusterv1beta1.AddToScheme(s); err != nil {
		return err
	}
	c, err := h.Client(tenancyv1alpha1.FleetWorkspace.String(), s)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		mc := &clusterv1beta1.MemberCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			last = err.Error()
			return false, nil
		}
		for _, t := range []string{clusterv1beta1.ConditionTypeMemberClusterJoined, clusterv1beta1.ConditionTypeMemberClusterHealthy} {
			if !meta.IsStatusConditionTrue(mc.Status.Conditions, t) {
				last = fmt.Sprintf("%s is not True: %+v", t, meta.FindStatusCondition(mc.Status.Conditions, t))
				return false, nil
			}
		}
		if _, ok := mc.Status.Properties[clusterv1beta1.NodeCountProperty]; !ok || mc.Status.ResourceUsage.Available.Cpu().IsZero() {
			last = "properties not reported yet"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("member %s not ready: %w (last: %s)", name, err, last)
	}
	return nil
}

// Client returns a client for the member cluster itself.
func (m *Member) Client(s *runtime.Scheme) (client.Client, error) {
	return client.New(m.Cluster.Config(), client.Options{Scheme: s})
}

// SyncerHubKubeconfig is the hub credential join minted for m's syncer.
func (m *Member) SyncerHubKubeconfig() string {
	return filepath.Join(m.StateDir, m.Name, "hub.kubeconfig")
}

// SyncerPid is the process id of m's syncer, as join --run recorded it.
func (m *Member) SyncerPid() (int, error) {
	raw, err := os.ReadFile(filepath.Join(m.StateDir, m.Name, "syncer.pid"))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(raw)))
}

// StopSyncer kills m's syncer, as if the member lost its agent.
func (m *Member) StopSyncer() error {
	pid, err := m.SyncerPid()
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
}

// StartExtraSyncer starts another syncer process for m with the credential
// join minted, as a copy started by mistake (or an overlapping restart)
// would run; its log goes to logPath. The caller stops it.
func (m *Member) StartExtraSyncer(logPath string) (*exec.Cmd, error) {
	return m.startSyncer(m.SyncerHubKubeconfig(), logPath, "0")
}

// StartSyncerThrough starts m's syncer (after StopSyncer) with the
// credential join minted but its hub connection through a proxy, serving
// metrics where the joined one did; its log goes to logPath. The caller
// stops it.
func (m *Member) StartSyncerThrough(p *Proxy, logPath string) (*exec.Cmd, error) {
	cfg, err := clientcmd.LoadFromFile(m.SyncerHubKubeconfig())
	if err != nil {
		return nil, err
	}
	for _, c := range cfg.Clusters {
		u, err := url.Parse(c.Server)
		if err != nil {
			return nil, err
		}
		u.Host = p.Addr
		c.Server = u.String()
	}
	path := logPath + ".kubeconfig"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return nil, err
	}
	return m.startSyncer(path, logPath, m.MetricsAddress)
}

func (m *Member) startSyncer(hubKubeconfig, logPath, metricsAddress string) (*exec.Cmd, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(BinDir(), "fleet-syncer"), "--hub-kubeconfig", hubKubeconfig,
		"--member-kubeconfig", m.Cluster.KubeconfigPath, "--member-name", m.Name, "--metrics-bind-address", metricsAddress, "--v", strconv.Itoa(m.LogVerbosity))
	cmd.Stdout, cmd.Stderr = log, log
	return cmd, cmd.Start()
}

// Stop stops m's syncer (if running) and its cluster.
func (m *Member) Stop() error {
	_ = m.StopSyncer()
	return m.Cluster.Stop()
}
