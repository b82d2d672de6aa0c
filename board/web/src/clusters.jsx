import { useState } from 'preact/hooks'
import { VirtualList } from './virtual.jsx'

const tileWidth = 260
const tileHeight = 150

function matches(c, filter) {
  if (!filter) return true
  const f = filter.toLowerCase()
  return (
    c.name.toLowerCase().includes(f) ||
    c.health.includes(f) ||
    Object.entries(c.labels || {}).some(([k, v]) => `${k}=${v}`.toLowerCase().includes(f)) ||
    (c.grants || []).some((g) => g.toLowerCase().includes(f))
  )
}

function Tile({ c }) {
  const props = Object.entries(c.properties || {})
  // The fleet's own labels (kubernetes-fleet.io/...) say nothing a person set.
  const labels = Object.entries(c.labels || {}).filter(([k]) => !k.startsWith('kubernetes-fleet.io/'))
  return (
    <div class={'tile health-' + c.health} data-cluster={c.name} title={c.message || ''}>
      <div class="tile-head">
        <b>{c.name}</b>
        {c.cordoned && <span class="badge warn">cordoned</span>}
        {c.leaving && <span class="badge bad">leaving</span>}
      </div>
      <div class="tile-line">{c.health}</div>
      {props.slice(0, 3).map(([k, v]) => (
        <div key={k} class="tile-line muted">
          {k}: {v}
        </div>
      ))}
      {(c.taints || []).length > 0 && <div class="tile-line">taints: {c.taints.join(', ')}</div>}
      {(c.grants || []).length > 0 && <div class="tile-line muted">grants: {c.grants.join(', ')}</div>}
      {labels.length > 0 && <div class="tile-line muted labels">{labels.map(([k, v]) => `${k}=${v}`).join(' ')}</div>}
    </div>
  )
}

// Clusters is the fleet map: a tile per cluster with its health,
// properties, taints and grants; cordoned and leaving clusters marked.
export function Clusters({ data }) {
  const [filter, setFilter] = useState('')
  const clusters = data.clusters.filter((c) => matches(c, filter))
  const perRow = Math.max(1, Math.floor((window.innerWidth - 40) / tileWidth))
  const rows = []
  for (let i = 0; i < clusters.length; i += perRow) rows.push(clusters.slice(i, i + perRow))
  const counts = {}
  for (const c of data.clusters) counts[c.health] = (counts[c.health] || 0) + 1
  return (
    <section>
      <div class="toolbar">
        <h2>Clusters</h2>
        <span class="muted">
          {data.clusters.length} from {data.source}
          {Object.entries(counts).map(([h, n]) => ` · ${n} ${h}`)}
        </span>
        <input placeholder="filter: name, label, grant, health" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      </div>
      {clusters.length === 0 ? (
        <p class="muted">No clusters to show{filter ? ' for this filter' : ''}.</p>
      ) : (
        <VirtualList
          items={rows}
          rowHeight={tileHeight + 10}
          height="calc(100vh - 150px)"
          render={(row) => (
            <div class="tiles">
              {row.map((c) => (
                <Tile key={c.name} c={c} />
              ))}
            </div>
          )}
        />
      )}
    </section>
  )
}
