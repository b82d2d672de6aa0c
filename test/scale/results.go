package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// figure is one measured number, with KubeFleet's figure for the same
// measurement where there is one.
type figure struct {
	Name      string  `json:"name"`
	Value     float64 `json:"value"`
	Unit      string  `json:"unit"`
	KubeFleet string  `json:"kubefleet,omitempty"`
	Note      string  `json:"note,omitempty"`
}

type results struct {
	Figures []figure `json:"figures"`
}

// add records a figure and prints it as `name value unit`.
func (r *results) add(name string, value float64, unit, kubefleet, note string) {
	r.Figures = append(r.Figures, figure{Name: name, Value: value, Unit: unit, KubeFleet: kubefleet, Note: note})
	line := fmt.Sprintf("%s %.3f %s", name, value, unit)
	if kubefleet != "" {
		line += "\t(KubeFleet: " + kubefleet + ")"
	}
	fmt.Println(line)
}

// durations records p50, p90 and max of a series of durations.
func (r *results) durations(name string, ds []time.Duration, kubefleet map[string]string, note string) {
	if len(ds) == 0 {
		return
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	at := func(q float64) time.Duration { return sorted[int(q*float64(len(sorted)-1)+0.5)] }
	for _, p := range []struct {
		suffix string
		d      time.Duration
	}{{"p50", at(0.5)}, {"p90", at(0.9)}, {"max", sorted[len(sorted)-1]}} {
		r.add(name+"_"+p.suffix, p.d.Seconds(), "s", kubefleet[p.suffix], note)
	}
}

func (r *results) write(path string) error {
	raw, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o644)
}

// rssOf reads a process's resident memory in bytes.
func rssOf(pid int) (int64, error) { return memoryOf(pid, "VmRSS") }

// anonymousRSSOf reads the part of a process's resident memory that is its
// own (heap, stacks), without the pages of files it maps, such as its binary.
func anonymousRSSOf(pid int) (int64, error) { return memoryOf(pid, "RssAnon") }

// memoryOf reads one of the memory fields of /proc/<pid>/status in bytes.
func memoryOf(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no %s for process %d", field, pid)
}

// cpuSecondsOf reads the CPU time (user and system) a process has used.
func cpuSecondsOf(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name, which is in parentheses and may
	// contain spaces; utime and stime are the 14th and 15th of the line.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %s", pid, raw)
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat: %s", pid, raw)
	}
	// Clock ticks: 100 per second on Linux.
	return (utime + stime) / 100, nil
}
