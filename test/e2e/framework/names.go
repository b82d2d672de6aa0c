package framework

import "k8s.io/apimachinery/pkg/util/rand"

// RandomSuffix is a short lowercase suffix for per-spec names.
func RandomSuffix() string { return rand.String(6) }
