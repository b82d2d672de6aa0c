package framework

// pickAll selects every cluster that passes the filters. Clusters with a
// current binding keep it; obsolete bindings are kept only if their cluster
// still passes under the current policy.
func (c *cycle) pickAll() error {
	c.keepCurrent()
	feasible, err := c.filterAll()
	if err != nil {
		return err
	}
	for _, mc := range feasible {
		c.pick(mc.Name, ClusterScore{})
	}
	c.unscheduleUnpickedObsolete()
	c.conclude(true)
	return nil
}
