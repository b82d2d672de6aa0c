package framework

// Profile lists the plugins to run at each extension point, in order. Filter
// order matters: the first plugin to reject a cluster gives the reason.
type Profile struct {
	name      string
	postBatch []PostBatchPlugin
	preFilter []PreFilterPlugin
	filter    []FilterPlugin
	preScore  []PreScorePlugin
	score     []ScorePlugin
	reserve   []ReservePlugin
	retain    []RetainPlugin
}

// NewProfile returns an empty profile.
func NewProfile(name string) *Profile { return &Profile{name: name} }

// Name returns the profile name.
func (p *Profile) Name() string { return p.name }

// WithPlugins adds each plugin at every extension point it implements, in
// the order given. A Reserve plugin makes its Filter and Score pick-time (see
// ReservePlugin).
func (p *Profile) WithPlugins(plugins ...Plugin) *Profile {
	for _, pl := range plugins {
		if x, ok := pl.(PostBatchPlugin); ok {
			p.postBatch = append(p.postBatch, x)
		}
		if x, ok := pl.(PreFilterPlugin); ok {
			p.preFilter = append(p.preFilter, x)
		}
		if x, ok := pl.(FilterPlugin); ok {
			p.filter = append(p.filter, x)
		}
		if x, ok := pl.(PreScorePlugin); ok {
			p.preScore = append(p.preScore, x)
		}
		if x, ok := pl.(ScorePlugin); ok {
			p.score = append(p.score, x)
		}
		if x, ok := pl.(ReservePlugin); ok {
			p.reserve = append(p.reserve, x)
		}
		if x, ok := pl.(RetainPlugin); ok {
			p.retain = append(p.retain, x)
		}
	}
	return p
}
