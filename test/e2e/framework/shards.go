package framework

import (
	"fmt"
	"os"
	"strconv"
)

// ShardsEnv names the number of shards a suite that supports it runs its hub
// on (FLEET_E2E_SHARDS=2: a root shard, shard-1 and a front-proxy); unset
// or 1 is one hub process.
const ShardsEnv = "FLEET_E2E_SHARDS"

// Shards is the number of shards ShardsEnv asks for, at least 1.
func Shards() (int, error) {
	v := os.Getenv(ShardsEnv)
	if v == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: give the number of shards, 1 or more", ShardsEnv, v)
	}
	return n, nil
}
