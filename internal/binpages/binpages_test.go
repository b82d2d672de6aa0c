package binpages

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

const smaps = `00400000-014a4000 r-xp 00000000 fe:00 42 /usr/bin/fleet-syncer
Size:              17040 kB
Rss:               11264 kB
Anonymous:             0 kB
014a4000-0267d000 r--p 010a4000 fe:00 42 /usr/bin/fleet-syncer
Size:              18276 kB
Rss:                9216 kB
Anonymous:           128 kB
0267d000-026e1000 rw-p 0227d000 fe:00 42 /usr/bin/fleet-syncer
Size:                400 kB
Rss:                 300 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 43 /usr/lib/libc.so.6
Size:               1024 kB
Rss:                 512 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 r--p 00000000 00:00 0
Size:               1024 kB
Rss:                   0 kB
Anonymous:             0 kB
7f0000400000-7f0000500000 r--p 00000000 fe:00 42 /usr/bin/fleet-syncer
Size:               1024 kB
Rss:                   0 kB
Anonymous:             0 kB
`

func TestReleasableTakesOnlyTheBinarysUnwrittenReadOnlyPages(t *testing.T) {
	got, err := releasable(strings.NewReader(smaps), "/usr/bin/fleet-syncer")
	if err != nil {
		t.Fatal(err)
	}
	// The code only: the read-only data has a written page, the data is
	// writable, the library is another file, and nothing of the last
	// mapping is resident.
	want := []mapping{{start: 0x400000, end: 0x14a4000, rss: 11264 << 10}}
	if len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("releasable = %+v, want %+v", got, want)
	}
}

func TestReleaseDropsTheBinarysPagesAndTheProgramRunsOn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before := rssFile(t)
	released, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	after := rssFile(t)
	if released == 0 || after >= before {
		t.Fatalf("released %d bytes; file pages resident %d kB before, %d kB after", released, before, after)
	}
	// The released code is read back as it runs.
	if got := strings.Repeat("ab", 3); got != "ababab" {
		t.Fatalf("strings.Repeat after the release = %q", got)
	}
	runtime.GC()
}

// rssFile reads the process's resident file pages in kB.
func rssFile(t *testing.T) uint64 {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if fields := strings.Fields(line); len(fields) >= 2 && fields[0] == "RssFile:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

func TestReleaseEveryStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() {
		ReleaseEvery(ctx, 10*time.Millisecond, logr.Discard())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ReleaseEvery still running 10 s after its context ended")
	}
}
