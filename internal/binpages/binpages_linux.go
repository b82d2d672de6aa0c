package binpages

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Release drops the pages of the process's own executable from its resident
// set, and returns how many bytes were resident.
func Release() (uint64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	maps, err := releasable(f, exe)
	if err != nil {
		return 0, fmt.Errorf("reading the process's memory map: %w", err)
	}
	var released uint64
	for _, m := range maps {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, uintptr(m.start), uintptr(m.end-m.start), unix.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("releasing %x-%x of %s: %w", m.start, m.end, exe, errno)
		}
		released += m.rss
	}
	return released, nil
}
