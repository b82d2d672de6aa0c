// Package binpages hands back the pages of the process's own binary that it
// touched once and does not use now. The kernel maps a binary's pages as its
// code runs, 64 KB around each page read (fault-around), and leaves them
// mapped: code that ran once — package initialisation, start-up, a busy
// spell — keeps much of the binary resident (37 of an idle syncer's 53 MB).
// Released pages stay in the page cache; the ones still used are mapped again
// the next time they are.
package binpages

import (
	"bufio"
	"context"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/wait"
)

// ReleaseEvery releases the binary's pages every interval until ctx ends.
// After each, the process takes a minor page fault per 64 KB of the code it
// still runs (no disk read while the page cache holds the binary).
func ReleaseEvery(ctx context.Context, interval time.Duration, log logr.Logger) {
	_ = wait.PollUntilContextCancel(ctx, interval, false, func(context.Context) (bool, error) {
		released, err := Release()
		if err != nil {
			log.Error(err, "the binary's pages could not be released; they stay resident")
			return false, err
		}
		log.V(4).Info("released the binary's pages", "bytes", released)
		return false, nil
	})
}

// mapping is an address range of the process's memory map.
type mapping struct {
	start, end uint64
	// rss is how much of it is resident, in bytes.
	rss uint64
}

// releasable reads a memory map in the format of /proc/PID/smaps and returns
// the mappings of exe that hold nothing but the file's pages: read-only, and
// none of their pages written since they were mapped (relocated, or a
// debugger's breakpoint), so that dropping them loses nothing.
func releasable(smaps io.Reader, exe string) ([]mapping, error) {
	var (
		out     []mapping
		cur     mapping
		ofExe   bool
		scanner = bufio.NewScanner(smaps)
	)
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) == 0 {
			continue
		}
		if start, end, ok := addressRange(fields[0]); ok && len(fields) >= 5 {
			// A header: "start-end perms offset dev inode [path]".
			cur = mapping{start: start, end: end}
			ofExe = len(fields) == 6 && fields[5] == exe && !strings.Contains(fields[1], "w")
			continue
		}
		if !ofExe || len(fields) < 2 {
			continue
		}
		kb, err := strconv.ParseUint(fields[1], 10, 64)
		if err != nil {
			continue
		}
		switch fields[0] {
		case "Rss:":
			cur.rss = kb << 10
		case "Anonymous:":
			// smaps lists it after Rss: the mapping is judged here.
			if kb == 0 && cur.rss > 0 {
				out = append(out, cur)
			}
			ofExe = false
		}
	}
	return out, scanner.Err()
}

// addressRange parses "start-end" in hexadecimal.
func addressRange(s string) (start, end uint64, ok bool) {
	from, to, found := strings.Cut(s, "-")
	if !found {
		return 0, 0, false
	}
	start, err1 := strconv.ParseUint(from, 16, 64)
	end, err2 := strconv.ParseUint(to, 16, 64)
	return start, end, err1 == nil && err2 == nil && end > start
}
