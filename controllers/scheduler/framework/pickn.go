package framework

import (
	"fmt"
	"slices"
	"strings"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
)

// candidate is a cluster that passed the static filters of a PickN cycle.
type candidate struct {
	cluster *clusterv1beta1.MemberCluster
	// static is the score from the static plugins; total adds the pick-time
	// plugins' score as of the latest evaluation.
	static, total ClusterScore
	// blocked is set while a pick-time filter rejects the cluster.
	blocked *Status
	picked  bool
}

// pickN keeps the current bindings and tops them up to n from the best
// scored candidates, or scales down when there are more than n.
func (c *cycle) pickN(n int) error {
	c.keepCurrent()
	if len(c.current) >= n {
		c.scaleDown(n)
		c.conclude(true)
		return nil
	}
	feasible, err := c.filterAll()
	if err != nil {
		return err
	}
	cands, err := c.scoreAll(feasible)
	if err != nil {
		return err
	}
	if err := c.pickBest(cands, n-len(c.current)); err != nil {
		return err
	}
	for i := range cands {
		cd := &cands[i]
		switch {
		case cd.picked:
			c.pick(cd.cluster.Name, cd.total)
		case cd.blocked != nil:
			c.reject(cd.cluster.Name, cd.blocked.Message(), nil)
		default:
			c.reject(cd.cluster.Name, fmt.Sprintf(notHighEnoughReasonFormat, cd.cluster.Name, cd.total.AffinityScore, cd.total.TopologySpreadScore),
				newClusterScore(cd.total))
		}
	}
	c.unscheduleUnpickedObsolete()
	c.conclude(len(c.selected) == n)
	return nil
}

// scaleDown unschedules every obsolete binding and the lowest ranked current
// bindings beyond n: Scheduled ones before Bound ones (they have not been
// rolled out yet), then by the score stored with the decision, then by name.
func (c *cycle) scaleDown(n int) {
	kept := make([]*Binding, 0, len(c.current))
	for _, b := range c.current {
		kept = append(kept, b)
	}
	slices.SortFunc(kept, func(a, b *Binding) int {
		if sa, sb := a.State == placementv1beta1.BindingStateScheduled, b.State == placementv1beta1.BindingStateScheduled; sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		if d := storedScore(a).Compare(storedScore(b)); d != 0 {
			return d
		}
		return strings.Compare(a.TargetCluster, b.TargetCluster)
	})
	removed := kept[:len(kept)-n]
	for _, b := range removed {
		c.unschedule(b)
		delete(c.selected, b.TargetCluster)
	}
	c.res.Decisions = slices.DeleteFunc(c.res.Decisions, func(d placementv1beta1.ClusterDecision) bool {
		return !c.selected[d.ClusterName]
	})
	for _, b := range c.obsolete {
		c.unschedule(b)
	}
}

func storedScore(b *Binding) ClusterScore {
	var s ClusterScore
	if cs := b.ClusterDecision.ClusterScore; cs != nil {
		s.AffinityScore = deref(cs.AffinityScore)
		s.TopologySpreadScore = deref(cs.TopologySpreadScore)
	}
	return s
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// scoreAll runs PreScore and the static Score plugins on the feasible clusters.
func (c *cycle) scoreAll(feasible []*clusterv1beta1.MemberCluster) ([]candidate, error) {
	skipped := map[string]bool{}
	for _, p := range c.fw.profile.preScore {
		st := p.PreScore(c.ctx, c.state, c.policy, feasible)
		switch {
		case st.IsSkip():
			skipped[p.Name()] = true
		case !st.IsSuccess():
			return nil, pluginError("PreScore", p, st)
		}
	}
	for _, p := range c.fw.profile.score {
		switch {
		case skipped[p.Name()]:
		case c.fw.pickTime[p.Name()]:
			c.pickScorers = append(c.pickScorers, p)
		default:
			c.scorers = append(c.scorers, p)
		}
	}
	cands := make([]candidate, len(feasible))
	for i, mc := range feasible {
		cands[i].cluster = mc
		s, err := c.score(c.scorers, mc)
		if err != nil {
			return nil, err
		}
		cands[i].static = s
	}
	return cands, nil
}

func (c *cycle) score(plugins []ScorePlugin, mc *clusterv1beta1.MemberCluster) (ClusterScore, error) {
	var total ClusterScore
	for _, p := range plugins {
		s, st := p.Score(c.ctx, c.state, c.policy, mc)
		if !st.IsSuccess() && !st.IsSkip() {
			return total, pluginError("Score", p, st)
		}
		total.Add(s)
	}
	return total, nil
}

// pickBest picks up to want candidates in batches of the PostBatch size. The
// pick-time plugins are evaluated again before each batch, so constraints
// that depend on earlier picks hold across the whole result; the last
// evaluation also explains the clusters left out.
func (c *cycle) pickBest(cands []candidate, want int) error {
	batch, err := c.batchSize(want)
	if err != nil {
		return err
	}
	pool := make([]*candidate, 0, len(cands))
	for {
		if err := c.evaluate(cands); err != nil {
			return err
		}
		if want == 0 || batch == 0 {
			return nil
		}
		pool = pool[:0]
		for i := range cands {
			if !cands[i].picked && cands[i].blocked == nil {
				pool = append(pool, &cands[i])
			}
		}
		if len(pool) == 0 {
			return nil
		}
		for _, cd := range best(pool, min(batch, want)) {
			cd.picked = true
			want--
			if err := c.reserve(cd.cluster); err != nil {
				return err
			}
		}
	}
}

// batchSize asks the PostBatch plugins how many clusters to pick at once.
func (c *cycle) batchSize(want int) (int, error) {
	size := want
	for _, p := range c.fw.profile.postBatch {
		n, st := p.PostBatch(c.ctx, c.state, c.policy)
		switch {
		case st.IsSkip():
		case !st.IsSuccess():
			return 0, pluginError("PostBatch", p, st)
		default:
			size = min(size, n)
		}
	}
	return max(size, 0), nil
}

// evaluate runs the pick-time filters and scorers on the unpicked candidates.
func (c *cycle) evaluate(cands []candidate) error {
	for i := range cands {
		cd := &cands[i]
		if cd.picked {
			continue
		}
		cd.total = cd.static
		st, err := c.filter(c.pickFilters, cd.cluster)
		if err != nil {
			return err
		}
		if cd.blocked = st; st != nil {
			continue
		}
		s, err := c.score(c.pickScorers, cd.cluster)
		if err != nil {
			return err
		}
		cd.total.Add(s)
	}
	return nil
}

func (c *cycle) reserve(mc *clusterv1beta1.MemberCluster) error {
	for _, p := range c.reservers {
		if st := p.Reserve(c.ctx, c.state, c.policy, mc); !st.IsSuccess() {
			return pluginError("Reserve", p, st)
		}
	}
	return nil
}

// best returns the k best ranked candidates of the pool, reordering it.
func best(pool []*candidate, k int) []*candidate {
	if k == 1 {
		top := 0
		for i, cd := range pool {
			if rankOrder(cd, pool[top]) < 0 {
				top = i
			}
		}
		pool[0], pool[top] = pool[top], pool[0]
		return pool[:1]
	}
	slices.SortFunc(pool, rankOrder)
	return pool[:min(k, len(pool))]
}

// rankOrder sorts higher ranked candidates first.
func rankOrder(a, b *candidate) int {
	return -compareRank(a.total, a.cluster.Name, b.total, b.cluster.Name)
}
