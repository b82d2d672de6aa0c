// Package quantities parses resource quantities that come from users and
// members with bounds, because apimachinery's parser and comparison take
// time exponential in the written exponent: "1e-99999999" takes most of a
// minute to parse and "1e99999999" as long to compare, long enough for one
// placement or one reported property to stall the shared scheduler.
package quantities

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

const (
	// MaxLength is the longest quantity accepted; real ones are a few
	// characters.
	MaxLength = 64
	// MaxExponent bounds the decimal exponent (three digits, as the schema allows).
	MaxExponent = 999
)

// Parse parses s as a resource.Quantity, refusing strings longer than
// MaxLength and decimal exponents beyond ±MaxExponent.
func Parse(s string) (resource.Quantity, error) {
	if len(s) > MaxLength {
		return resource.Quantity{}, fmt.Errorf("quantity %.16q… is longer than %d characters", s, MaxLength)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		// "E" alone is the exa suffix and "Ei" the exbi one: not exponents.
		exp, err := strconv.ParseInt(strings.TrimPrefix(s[i+1:], "+"), 10, 64)
		if errors.Is(err, strconv.ErrRange) || err == nil && (exp > MaxExponent || exp < -MaxExponent) {
			return resource.Quantity{}, fmt.Errorf("quantity %q has an exponent beyond ±%d", s, MaxExponent)
		}
	}
	return resource.ParseQuantity(s)
}
