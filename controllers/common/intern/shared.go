package intern

import (
	"encoding/binary"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// generation is how long a shared value stays findable without being looked
// up again. The table only finds values: the objects that hold one keep it
// alive, so a value an object still holds outlives its entry, and one no
// object holds is freed within two generations.
const generation = time.Minute

// table keeps one copy of each value its key names, for what unique cannot
// intern because it is not comparable: maps and slices. It keeps two
// generations of entries, the current and the last; a lookup that finds an
// entry in the last carries it over, and the last is dropped when the
// current has been in use for a generation.
type table[V any] struct {
	mu        sync.Mutex
	now       func() time.Time
	cur, last map[string]V
	started   time.Time
}

func newTable[V any]() *table[V] {
	return &table[V]{now: time.Now, cur: map[string]V{}}
}

// share returns the value kept under key, or keeps and returns the one
// build makes.
func (t *table[V]) share(key []byte, build func() V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if now := t.now(); now.Sub(t.started) >= generation {
		t.last, t.cur, t.started = t.cur, map[string]V{}, now
	}
	if v, ok := t.cur[string(key)]; ok {
		return v
	}
	v, ok := t.last[string(key)]
	if !ok {
		v = build()
	}
	t.cur[string(key)] = v
	return v
}

// keyOf is the start of a key: appendString and appendInt add to it so
// that no two different sequences of strings and numbers give one key.
type keyOf []byte

func (k keyOf) appendString(s string) keyOf {
	return append(binary.AppendUvarint(k, uint64(len(s))), s...)
}

func (k keyOf) appendInt(i int64) keyOf {
	return binary.AppendVarint(k, i)
}

// appendConditions adds everything of each condition, the time to the
// nanosecond and its location included.
func (k keyOf) appendConditions(cs []metav1.Condition) keyOf {
	k = k.appendInt(int64(len(cs)))
	for _, c := range cs {
		t := c.LastTransitionTime.Time
		k = k.appendString(c.Type).appendString(string(c.Status)).appendString(c.Reason).appendString(c.Message).
			appendInt(c.ObservedGeneration).appendInt(t.Unix()).appendInt(int64(t.Nanosecond())).appendString(t.Location().String())
	}
	return k
}
