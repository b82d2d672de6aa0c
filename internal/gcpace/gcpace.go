// Package gcpace sets the garbage collector's target (GOGC) from how fast the
// process allocates. Go's default lets the heap grow to twice what survived
// the last collection before collecting again, and the runtime keeps that
// much memory: an idle hub whose live heap is 260 MB holds 520 MB of heap
// while allocating a few MB a second, and would collect every 100 seconds.
// The pacer lets the heap grow by what the process allocates in Interval
// instead, within [Min, Max] percent of the live heap: an idle process keeps
// less memory at the cost of a collection every Interval, a busy one keeps
// Go's default (Max).
//
// A process that allocates a lot without being short of CPU (a large fleet's
// hub at rest: its heartbeats) gets at most QuietMax: collecting twice as
// often costs CPU it has to spare and saves a quarter of its heap.
package gcpace

import (
	"context"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var gcPercent = prometheus.NewGauge(prometheus.GaugeOpts{
	Name: "fleet_gc_percent",
	Help: "The garbage collector's target (GOGC) the pacer set: the percentage of the live heap the heap may grow by before the next collection.",
})

var gcReleases = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "fleet_gc_releases_total",
	Help: "Times the pacer, having lowered the garbage collector's target to half or less of its highest since the last time, collected and handed the heap's free memory back to the system.",
})

func init() {
	ctrlmetrics.Registry.MustRegister(gcPercent, gcReleases)
}

// Pacer sets GOGC after each garbage collection.
type Pacer struct {
	// Min and Max bound GOGC.
	Min, Max int
	// QuietMax bounds GOGC instead of Max while the process is not
	// CPU-bound: for the last Interval/4 it used less than half of its CPUs
	// (GOMAXPROCS), and in no second nearly all of them (see load). 0 keeps
	// Max.
	QuietMax int
	// Interval is the time between collections the pacer aims for while
	// the process allocates little.
	Interval time.Duration
}

// Run paces the collector until ctx ends, then restores Max. It does nothing
// when the operator set GOGC in the environment.
//
// It sets GOGC after every collection (one within Interval/20 of its last
// look waits for the next), and four times an Interval besides, from the
// rate since it last looked: a process that went quiet after a busy
// spell would otherwise keep the busy spell's target until its next
// collection, minutes away at the quiet rate. A lower target set between
// collections starts one at once if the heap is already past it.
//
// When the target falls far (see releases), the pacer also hands the memory
// the busier spell left free back to the system: Go's scavenger keeps ~110%
// of the heap that was in use when the last collection ended, before it
// swept, so a process gone quiet would keep its busy heap's pages resident
// until its next busy spell.
func (p Pacer) Run(ctx context.Context, log logr.Logger) {
	if os.Getenv("GOGC") != "" {
		log.Info("GOGC is set: the garbage collector is not paced")
		return
	}
	collected := make(chan struct{}, 1)
	notifyAfterCollections(ctx, collected)
	defer debug.SetGCPercent(p.Max)
	tick := time.NewTicker(max(p.Interval/4, time.Millisecond))
	defer tick.Stop()
	last := readHeap()
	release := releases{interval: p.Interval, highest: p.Max}
	cpu := newLoad(last, p.Interval/4)
	for {
		select {
		case <-ctx.Done():
			return
		case <-collected:
		case <-tick.C:
		}
		now := readHeap()
		cpu.observe(now, runtime.GOMAXPROCS(0))
		if now.at.Sub(last.at) < p.Interval/20 {
			// Too soon after the last reading to tell a rate from (the
			// collection a release forces ends just after it): the next
			// reading counts from the last.
			continue
		}
		percent := p.percent(last, now, cpu.quiet(now.at))
		// Released before the lower target is set: that target would start
		// a collection of its own, and the release collects anyway.
		if release.due(now.at, percent) {
			debug.FreeOSMemory()
			gcReleases.Inc()
			// The release's collection is not the process's work: the
			// rate and the load count from after it.
			now = readHeap()
			cpu.skip(now)
		}
		if old := debug.SetGCPercent(percent); old != percent {
			log.V(4).Info("garbage collector paced", "gcPercent", percent, "liveBytes", now.live)
		}
		gcPercent.Set(float64(percent))
		last = now
	}
}

// releases decides when the free heap is handed back: when the target is
// half or less of the highest it has been since the last release, at most
// once an interval (a fall inside the interval is released when it ends, if
// the target is still that low).
type releases struct {
	interval time.Duration
	last     time.Time
	highest  int
}

// due records the target set at a time and reports whether to release now.
func (r *releases) due(at time.Time, percent int) bool {
	r.highest = max(r.highest, percent)
	if 2*percent > r.highest || at.Sub(r.last) < r.interval {
		return false
	}
	r.last, r.highest = at, percent
	return true
}

// heap is what the pacer reads after a collection.
type heap struct {
	at        time.Time
	allocated uint64  // bytes allocated since the process started
	live      uint64  // bytes the last collection found live
	cpu       float64 // seconds of CPU the process used since it started
}

func readHeap() heap {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	return heap{at: time.Now(), allocated: samples[0].Value.Uint64(), live: samples[1].Value.Uint64(), cpu: processCPU()}
}

// processCPU is the user and system CPU time of the process, in seconds (0
// where the system does not say). Go's own CPU figures (runtime/metrics'
// /cpu/classes) are updated only by collections, and the pacer also looks
// between them.
func processCPU() float64 {
	var usage syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) != nil {
		return 0
	}
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
}

// percent is the GOGC that lets the heap grow by what the process allocated
// per Interval between the two readings, at most QuietMax when quiet.
func (p Pacer) percent(last, now heap, quiet bool) int {
	ceiling := p.Max
	if quiet && p.QuietMax > 0 {
		ceiling = min(p.QuietMax, p.Max)
	}
	elapsed := now.at.Sub(last.at)
	if elapsed <= 0 || now.live == 0 || now.allocated < last.allocated {
		return ceiling
	}
	rate := float64(now.allocated-last.allocated) / elapsed.Seconds()
	headroom := rate * p.Interval.Seconds()
	percent := math.Ceil(100 * headroom / float64(now.live))
	return int(math.Max(float64(p.Min), math.Min(float64(ceiling), percent)))
}

// load tells a CPU-bound process from one with CPU to spare. A window of a
// second or more in which the process used nearly all of its CPUs (a burst of
// work) makes it busy at once; so does a window of the calm time in which it
// used half of them. It is quiet once it was not busy for the calm time. A
// collection's own CPU (at 50%, with a large live heap, a quarter of the CPUs
// for seconds) does not make a process at rest look busy, and would otherwise
// set the target back to the default after every lowered one.
type load struct {
	burst, sustained window
	calm             time.Duration
	busyAt           time.Time // the end of the last busy window (the start counts as busy)
}

func newLoad(start heap, calm time.Duration) *load {
	return &load{
		burst:     window{length: time.Second, share: 0.9, since: start.at, cpu: start.cpu},
		sustained: window{length: calm, share: 0.5, since: start.at, cpu: start.cpu},
		calm:      calm,
		busyAt:    start.at,
	}
}

// observe closes either window at a reading if it is long enough.
func (l *load) observe(now heap, cpus int) {
	burst, sustained := l.burst.busy(now, cpus), l.sustained.busy(now, cpus)
	if burst || sustained {
		l.busyAt = now.at
	}
}

// skip starts both windows afresh at now without judging them: the CPU
// used since the last reading was the pacer's own release (a collection and
// handing the free heap back: both CPUs for seconds with a large heap), and
// judged as work it would set the target back up after every release.
func (l *load) skip(now heap) {
	l.burst.since, l.burst.cpu = now.at, now.cpu
	l.sustained.since, l.sustained.cpu = now.at, now.cpu
}

// quiet reports whether no window was busy for the calm time up to at.
func (l *load) quiet(at time.Time) bool {
	return at.Sub(l.busyAt) >= l.calm
}

// window is a stretch of time over which the process's CPU use is judged.
type window struct {
	length time.Duration // the shortest it is judged over
	share  float64       // of the CPUs, at or above which it is busy
	since  time.Time     // the current window's start
	cpu    float64       // the process's CPU seconds then
}

// busy reports whether the window closed at now (it is long enough) with the
// process busy, and starts the next one if it did close.
func (w *window) busy(now heap, cpus int) bool {
	elapsed := now.at.Sub(w.since)
	if elapsed < w.length {
		return false
	}
	busy := now.cpu-w.cpu >= w.share*float64(cpus)*elapsed.Seconds()
	w.since, w.cpu = now.at, now.cpu
	return busy
}

// notifyAfterCollections sends on ch (without blocking) after every garbage
// collection until ctx ends: a finalizer runs once the collector found its
// object unreachable, and arms the next one.
func notifyAfterCollections(ctx context.Context, ch chan<- struct{}) {
	type sentinel struct{ _ *int }
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if ctx.Err() != nil {
				return
			}
			select {
			case ch <- struct{}{}:
			default:
			}
			arm()
		})
	}
	arm()
}
