package framework

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/rand"
)

// RandomSuffix is a short lowercase suffix for per-spec names.
func RandomSuffix() string { return rand.String(6) }

// UniqueName is prefix-<RandomSuffix>: a workspace or object name that no
// other spec uses.
func UniqueName(prefix string) string { return prefix + "-" + RandomSuffix() }

// KeepArtifacts is set by FLEET_E2E_KEEP=1: suites then keep their state
// directories (hub and syncer logs, member clusters) even when they pass.
func KeepArtifacts() bool { return os.Getenv("FLEET_E2E_KEEP") == "1" }

// Scale is the number a load spec uses: the environment variable name
// (set by `make test-soak`) or def.
func Scale(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Duration reads a duration such as 15m from the environment, def if
// unset; any other value stops the suite rather than be ignored.
func Duration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		panic(fmt.Sprintf("%s=%q is not a positive duration such as 15m", name, v))
	}
	return d
}
