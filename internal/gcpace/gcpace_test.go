package gcpace

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The target follows the allocation rate; a process with CPU to spare gets
// at most QuietMax however fast it allocates.
func TestPercentFollowsTheAllocationRate(t *testing.T) {
	p := Pacer{Min: 25, Max: 100, QuietMax: 50, Interval: 30 * time.Second}
	start := time.Unix(1000, 0)
	const mb = 1 << 20
	last := heap{at: start, allocated: 1000 * mb}
	for _, c := range []struct {
		name    string
		now     heap
		quiet   bool
		percent int
	}{
		// 2 MB/s: 60 MB per 30 s is 24% of 260 MB, under the floor.
		{"idle", heap{at: start.Add(60 * time.Second), allocated: 1120 * mb, live: 260 * mb}, false, 25},
		// 5 MB/s: 150 MB per 30 s, 58% of 260 MB.
		{"some work", heap{at: start.Add(60 * time.Second), allocated: 1300 * mb, live: 260 * mb}, false, 58},
		// 200 MB/s: Go's default.
		{"busy", heap{at: start.Add(2 * time.Second), allocated: 1400 * mb, live: 260 * mb}, false, 100},
		{"no time passed", heap{at: start, allocated: 1400 * mb, live: 260 * mb}, false, 100},
		{"nothing live yet", heap{at: start.Add(time.Second), allocated: 1400 * mb}, false, 100},
		// 50 MB/s: 1.5 GB per 30 s, more than the live heap.
		{"allocating, CPU-bound", heap{at: start.Add(60 * time.Second), allocated: 4000 * mb, live: 1400 * mb}, false, 100},
		{"allocating, CPU to spare", heap{at: start.Add(60 * time.Second), allocated: 4000 * mb, live: 1400 * mb}, true, 50},
		// 10 MB/s: 300 MB per 30 s, 22% of 1.4 GB.
		{"allocating little, CPU to spare", heap{at: start.Add(60 * time.Second), allocated: 1600 * mb, live: 1400 * mb}, true, 25},
		{"nothing live yet, CPU to spare", heap{at: start.Add(time.Second), allocated: 1400 * mb}, true, 50},
	} {
		if got := p.percent(last, c.now, c.quiet); got != c.percent {
			t.Errorf("%s: GOGC %d, want %d", c.name, got, c.percent)
		}
	}
	p.QuietMax = 0
	if got := p.percent(last, heap{at: start.Add(time.Minute), allocated: 4000 * mb, live: 1400 * mb}, true); got != 100 {
		t.Errorf("without QuietMax: GOGC %d when quiet, want 100", got)
	}
}

// On two CPUs: a second or more using 1.8 CPUs or more is a burst; 15
// seconds or more using a CPU or more is sustained work. The process is quiet
// once neither was seen for 15 seconds, and busy again at once.
func TestLoadTellsBusyFromQuiet(t *testing.T) {
	start := time.Unix(1000, 0)
	l := newLoad(heap{at: start, cpu: 100}, 15*time.Second)
	for _, step := range []struct {
		name  string
		after time.Duration
		cpu   float64
		quiet bool
	}{
		{"starting counts as busy", 5 * time.Second, 100.5, false},
		{"quiet seconds, not yet for the calm time", 10 * time.Second, 101, false},
		{"quiet for the calm time", 20 * time.Second, 102, true},
		{"too short to judge", 20*time.Second + 100*time.Millisecond, 102.2, true},
		{"a collection's seconds: 1.4 CPUs", 23 * time.Second, 106.2, true},
		{"a burst: 1.9 CPUs for 2 s", 25 * time.Second, 110, false},
		{"quiet since, not yet for the calm time", 38 * time.Second, 112, false},
		{"quiet for the calm time since the burst", 40 * time.Second, 112.5, true},
		{"sustained: 1.2 CPUs, never 1.8", 56 * time.Second, 131.7, false},
	} {
		now := heap{at: start.Add(step.after), cpu: step.cpu}
		l.observe(now, 2)
		if got := l.quiet(now.at); got != step.quiet {
			t.Errorf("%s: quiet %v, want %v", step.name, got, step.quiet)
		}
	}
}

func TestLoadLeavesTheReleaseOut(t *testing.T) {
	start := time.Unix(1000, 0)
	l := newLoad(heap{at: start, cpu: 100}, 15*time.Second)
	l.observe(heap{at: start.Add(20 * time.Second), cpu: 102}, 2)
	// The release: both CPUs for two seconds, then the reading its
	// collection prompts.
	l.skip(heap{at: start.Add(22 * time.Second), cpu: 106})
	for _, after := range []time.Duration{22*time.Second + 50*time.Millisecond, 30 * time.Second} {
		now := heap{at: start.Add(after), cpu: 106 + after.Seconds() - 22}
		l.observe(now, 2)
		if !l.quiet(now.at) {
			t.Fatalf("busy %s after the start, after a release and one CPU since", after)
		}
	}
}

func TestProcessCPUCounts(t *testing.T) {
	before := processCPU()
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
	}
	if after := processCPU(); after <= before {
		t.Fatalf("process CPU %v s after spinning, %v s before", after, before)
	}
}

func TestNotifiedAfterEachCollection(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	collected := make(chan struct{}, 1)
	notifyAfterCollections(ctx, collected)
	for i := 0; i < 3; i++ {
		runtime.GC()
		select {
		case <-collected:
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification after collection %d", i+1)
		}
	}
}

func readRuntimeMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func currentGCPercent() uint64 { return readRuntimeMetric("/gc/gogc:percent") }

// awaitGCPercent calls between until GOGC is want, for up to timeout.
func awaitGCPercent(t *testing.T, want uint64, timeout time.Duration, between func()) {
	t.Helper()
	await(t, timeout, func() bool { return currentGCPercent() == want }, between,
		func() string { return fmt.Sprintf("GOGC %d, want %d", currentGCPercent(), want) })
}

// await calls between until done, for up to timeout, and fails with what
// failure says if it is not done by then.
func await(t *testing.T, timeout time.Duration, done func() bool, between func(), failure func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal(failure())
		}
		between()
	}
}

// A process that allocates little gets the floor; when the pacer stops, Go's
// default comes back.
func TestRunPacesAndRestores(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: the pacer stays off")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Pacer{Min: 30, Max: 100, Interval: time.Millisecond}.Run(ctx, logr.Discard())
	}()
	awaitGCPercent(t, 30, 30*time.Second, func() {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	})
	cancel()
	<-done
	if got := currentGCPercent(); got != 100 {
		t.Fatalf("GOGC %d after the pacer stopped, want 100", got)
	}
}

// A process that went quiet gets the floor within an interval, without
// waiting for its next collection.
func TestRunLowersTheTargetBetweenCollections(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: the pacer stays off")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cyclesMetric = "/gc/cycles/total:gc-cycles"
	cycles := readRuntimeMetric(cyclesMetric)
	go Pacer{Min: 30, Max: 100, Interval: 20 * time.Millisecond}.Run(ctx, logr.Discard())
	awaitGCPercent(t, 30, 10*time.Second, func() { time.Sleep(5 * time.Millisecond) })
	if readRuntimeMetric(cyclesMetric) != cycles {
		t.Skip("a collection ran meanwhile: it, not the interval, may have set the target")
	}
}

// A process gone quiet after a busy spell hands the free heap that spell left
// back to the system when its target falls, and not again while it stays low.
func TestRunReleasesTheBusySpellsMemory(t *testing.T) {
	if os.Getenv("GOGC") != "" {
		t.Skip("GOGC is set in the environment: the pacer stays off")
	}
	const freeMetric = "/memory/classes/heap/free:bytes"
	busySpell()
	runtime.GC()
	before := readRuntimeMetric(freeMetric)
	if before < 8<<20 {
		t.Skipf("only %d bytes of the heap are free and kept: nothing to release", before)
	}
	releases := testutil.ToFloat64(gcReleases)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Pacer{Min: 30, Max: 100, Interval: 200 * time.Millisecond}.Run(ctx, logr.Discard())
	await(t, 10*time.Second, func() bool { return testutil.ToFloat64(gcReleases) != releases },
		func() { time.Sleep(5 * time.Millisecond) },
		func() string { return "the pacer lowered the target without releasing memory" })
	if after := readRuntimeMetric(freeMetric); after > before/2 {
		t.Fatalf("%d bytes of the heap free and kept after the release, %d before", after, before)
	}
	time.Sleep(500 * time.Millisecond)
	if got := testutil.ToFloat64(gcReleases); got != releases+1 {
		t.Fatalf("%v releases while the target stayed low, want one", got-releases)
	}
}

// busySpell allocates 64 MB in short-lived 1 MB buffers.
func busySpell() {
	var keep [][]byte
	for i := 0; i < 64; i++ {
		keep = append(keep, make([]byte, 1<<20))
		if len(keep) == 8 {
			keep = keep[:0]
		}
	}
	runtime.KeepAlive(keep)
}

func TestReleasesAfterAFallAtMostOnceAnInterval(t *testing.T) {
	start := time.Unix(1000, 0)
	r := releases{interval: time.Minute, highest: 100}
	for _, step := range []struct {
		name    string
		after   time.Duration
		percent int
		due     bool
	}{
		{"busy", 0, 100, false},
		{"quiet: the target fell to a quarter", 15 * time.Second, 25, true},
		{"still quiet", 30 * time.Second, 25, false},
		{"busy again within the interval", 45 * time.Second, 100, false},
		{"quiet again within the interval", 60 * time.Second, 30, false},
		{"the interval is over, still quiet", 75 * time.Second, 30, true},
		{"some work: not half of the highest since", 90 * time.Second, 40, false},
		{"back down, within the interval", 105 * time.Second, 25, false},
		{"over a minute later, no fall since", 150 * time.Second, 25, false},
	} {
		if got := r.due(start.Add(step.after), step.percent); got != step.due {
			t.Errorf("%s: release %v, want %v", step.name, got, step.due)
		}
	}
}
