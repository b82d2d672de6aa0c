// Command scale measures Fleetplane at fleet scale: the real hub (embedded,
// started here, or an external one) and N simulated member clusters, each a
// lightweight agent using the hub API with the member's own scoped
// credential (see member.go). It prints one line per figure
// (`name value unit`, with KubeFleet's figure where there is one) and writes
// them all to a JSON file. `make bench-scale` runs it with 1,000 members.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetplane/fleetplane/internal/huburl"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

var scheme = framework.NewScheme()

type options struct {
	members         int
	realMembers     int
	heartbeatSpread time.Duration
	heartbeat       time.Duration
	samples         int
	pick            int
	kubeconfig      string
	out             string
	dir             string
	profileDir      string
	load            int
	loadPick        int
	loadTimeout     time.Duration
	teams           int
	teamPick        int
	settleRestarted bool
	shards          int
	board           int
	boardPick       int
	hubArgs         []string
}

func main() {
	o := options{}
	flag.IntVar(&o.members, "members", 1000, "simulated member clusters")
	flag.IntVar(&o.realMembers, "real-members", 0, "instead of simulated members, start this many real member clusters with their syncers (embedded hub only) and take the real-member figures")
	flag.DurationVar(&o.heartbeatSpread, "heartbeat-spread", 60*time.Second, "the members' first heartbeats are spread over this long")
	flag.DurationVar(&o.heartbeat, "heartbeat-period", 60*time.Second, "heartbeat period of every member")
	flag.IntVar(&o.samples, "samples", 7, "placements timed for each placement figure")
	flag.IntVar(&o.pick, "pick", 100, "numberOfClusters of the PickN placements timed")
	flag.StringVar(&o.kubeconfig, "hub-kubeconfig", "", "admin kubeconfig of an external hub; empty starts an embedded hub (bin/fleet-hub)")
	flag.StringVar(&o.out, "out", "scale-results.json", "where the figures are written as JSON")
	flag.StringVar(&o.dir, "dir", "", "state directory of an embedded hub, kept afterwards; empty makes a temporary one, removed when the hub stops unless the run failed")
	flag.StringVar(&o.profileDir, "profile-dir", "", "write CPU and heap profiles of the embedded hub during the timed placements into this directory")
	flag.IntVar(&o.load, "load", 0, "then create this many placements (PickN(--load-pick) each, 100 to a team workspace), time PickN placements again with them present, and restart the hub over them")
	flag.IntVar(&o.loadPick, "load-pick", 100, "numberOfClusters of each --load placement")
	flag.DurationVar(&o.loadTimeout, "load-timeout", time.Hour, "how long the --load and --teams placements may take to become Available (1,000 x 100 on 2 cores takes longer than the default)")
	flag.IntVar(&o.teams, "teams", 0, "then create this many team workspaces with one PickN(--team-pick) placement each, read the hub's memory growth per workspace and time PickN placements again in a new workspace")
	flag.BoolVar(&o.settleRestarted, "settle-restarted", true, "after the --load restart's figures, leave the restarted hub quiet and read its memory again (hub_rss_restarted_settled; about 3 minutes more)")
	flag.IntVar(&o.teamPick, "team-pick", 10, "numberOfClusters of each --teams placement")
	flag.IntVar(&o.board, "board", 0, "then create this many placements (PickN(--board-pick) each) in one team workspace and time the fleet board over them in headless Chromium: the grid's first rows, its longest frame while scrolling, a new placement's arrival on the page")
	flag.IntVar(&o.boardPick, "board-pick", 10, "numberOfClusters of each --board placement")
	flag.IntVar(&o.shards, "shards", 1, "run the embedded hub as this many kcp shards behind a front-proxy (2 or more); the PickN placements are timed in a workspace on each shard, and each shard's memory is read")
	flag.Func("hub-arg", "a further fleet-hub start flag for the embedded hub (repeatable), e.g. --hub-arg=--watch-cache=false", func(s string) error {
		o.hubArgs = append(o.hubArgs, s)
		return nil
	})
	flag.Parse()

	ctrl.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

func run(ctx context.Context, o options) (err error) {
	h, shards, dir, stopHub, err := hub(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		r := recover()
		stopHub(err != nil || r != nil)
		if r != nil {
			panic(r)
		}
	}()
	// The members stop before the hub does.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f := &fleet{admin: h.Admin, opts: o, prof: &profiler{hub: h, dir: o.profileDir}, shards: shards}
	res := &results{}
	if o.realMembers > 0 {
		if h.Pid() == 0 {
			return fmt.Errorf("--real-members needs the embedded hub: it joins local clusters with `kubectl fleet join --run`")
		}
		real := &realFleet{fleet: f, hub: h}
		defer real.stop()
		if err := real.start(ctx, dir, o.realMembers); err != nil {
			return err
		}
		if err := real.measure(ctx, res); err != nil {
			return err
		}
		return res.write(o.out)
	}
	if err := f.join(ctx, res); err != nil {
		return err
	}
	if err := f.placements(ctx, res, ""); err != nil {
		return err
	}
	f.memory(res, "hub_rss", "2300 (KubeFleet, 16 cores)", fmt.Sprintf("after %d placements over %d members", o.samples, o.members))
	if o.teams > 0 && h.Pid() != 0 {
		if err := f.tenancy(ctx, h, res); err != nil {
			return err
		}
	}
	if o.board > 0 {
		if err := f.boardFigures(ctx, h, res); err != nil {
			return err
		}
	}
	if o.load > 0 {
		l, err := f.loadPlacements(ctx, h, res)
		if err != nil {
			return err
		}
		if err := f.placements(ctx, res, "loaded"); err != nil {
			return err
		}
		if h.Pid() != 0 {
			if err := l.settledMemory(ctx, h, res); err != nil {
				return err
			}
			if err := l.restart(ctx, h, res); err != nil {
				return err
			}
		}
	}
	return res.write(o.out)
}

// memory records the embedded hub's resident memory, each shard's as
// name_<shard> on a hub of several.
func (f *fleet) memory(res *results, name, kubefleet, note string) {
	for _, s := range f.hubProcesses() {
		if rss, err := rssOf(s.pid()); err == nil && s.pid() != 0 {
			res.add(name+s.suffix, float64(rss)/1e6, "MB", kubefleet, note)
		}
	}
}

// hubProcess is one process of the embedded hub: the hub, or a shard.
type hubProcess struct {
	// suffix names its figures: empty for a hub of one shard, _<shard>
	// for a shard of several.
	suffix string
	pid    func() int
}

// hubProcesses are the embedded hub's processes: the hub, or each shard.
func (f *fleet) hubProcesses() []hubProcess {
	if f.shards == nil {
		return []hubProcess{{pid: f.prof.hub.Pid}}
	}
	var out []hubProcess
	for i, s := range f.shards.Shards {
		out = append(out, hubProcess{suffix: "_" + localfleet.ShardName(i), pid: s.Pid})
	}
	return out
}

// hub returns the hub under test (its Admin config is for the kcp base
// URL; Pid is 0 for an external hub), its shards when it runs on several,
// the state directory of an embedded one, and how to stop it (a temporary
// state directory goes unless the run failed).
func hub(ctx context.Context, o options) (*localfleet.Hub, *localfleet.ShardedHub, string, func(failed bool), error) {
	if o.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, nil, "", nil, err
		}
		cfg.Host = huburl.Base(cfg.Host)
		return &localfleet.Hub{Admin: cfg}, nil, "", func(bool) {}, nil
	}
	dir := o.dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "fleet-scale-"); err != nil {
			return nil, nil, "", nil, err
		}
	}
	logf("starting the hub (state in %s)", dir)
	h, shards, err := startHub(ctx, o, dir)
	if err != nil {
		logf("the hub's state is kept in %s", dir)
		return nil, nil, "", nil, err
	}
	return h, shards, dir, func(failed bool) {
		if shards != nil {
			_ = shards.Stop() // the front-proxy too
		} else {
			_ = h.Stop()
		}
		if o.dir != "" || failed {
			logf("the hub's state is kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	}, nil
}

// startHub starts the embedded hub: one process, or o.shards shards
// behind a front-proxy.
func startHub(ctx context.Context, o options, dir string) (*localfleet.Hub, *localfleet.ShardedHub, error) {
	if o.shards > 1 {
		shards, err := localfleet.StartShardedHub(ctx, localfleet.ShardedHubOptions{Dir: dir, Shards: o.shards, Args: o.hubArgs})
		if err != nil {
			return nil, nil, err
		}
		return shards.Hub(), shards, nil
	}
	h, err := localfleet.StartHub(ctx, localfleet.HubOptions{RootDir: filepath.Join(dir, "hub"), Args: o.hubArgs})
	if err != nil {
		if h != nil { // started, never ready
			_ = h.Stop()
		}
		return nil, nil, err
	}
	return h, nil, nil
}
