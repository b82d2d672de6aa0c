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

// WithPostBatchPlugin adds a PostBatch plugin.
func (p *Profile) WithPostBatchPlugin(pl PostBatchPlugin) *Profile {
	p.postBatch = append(p.postBatch, pl)
	return p
}

// WithPreFilterPlugin adds a PreFilter plugin.
func (p *Profile) WithPreFilterPlugin(pl PreFilterPlugin) *Profile {
	p.preFilter = append(p.preFilter, pl)
	return p
}

// WithFilterPlugin adds a Filter plugin.
func (p *Profile) WithFilterPlugin(pl FilterPlugin) *Profile {
	p.filter = append(p.filter, pl)
	return p
}

// WithPreScorePlugin adds a PreScore plugin.
func (p *Profile) WithPreScorePlugin(pl PreScorePlugin) *Profile {
	p.preScore = append(p.preScore, pl)
	return p
}

// WithScorePlugin adds a Score plugin.
func (p *Profile) WithScorePlugin(pl ScorePlugin) *Profile {
	p.score = append(p.score, pl)
	return p
}

// WithReservePlugin adds a Reserve plugin, making its Filter and Score
// pick-time (see ReservePlugin).
func (p *Profile) WithReservePlugin(pl ReservePlugin) *Profile {
	p.reserve = append(p.reserve, pl)
	return p
}

// WithRetainPlugin adds a Retain plugin.
func (p *Profile) WithRetainPlugin(pl RetainPlugin) *Profile {
	p.retain = append(p.retain, pl)
	return p
}
