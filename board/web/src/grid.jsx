import { useState } from 'preact/hooks'
import { href } from './route.js'
import { VirtualGrid } from './virtual.jsx'

export const states = ['scheduled', 'rolling out', 'applied', 'available', 'failed', 'drifted', 'diffed']

export function StateBadge({ state, reason }) {
  return (
    <span class={'state s-' + state.replace(' ', '-')} title={reason || ''}>
      {state}
    </span>
  )
}

// Grid shows placements against clusters, a cell per placement on a
// cluster, coloured by its state; the reason shows on hover.
export function Grid({ overview, ws }) {
  const [filter, setFilter] = useState('')
  const [allClusters, setAllClusters] = useState(false)
  const f = filter.toLowerCase()
  const placements = overview.placements.filter((p) => !f || `${p.namespace}/${p.name}`.toLowerCase().includes(f))
  const used = new Set()
  for (const p of placements) for (const c in p.cells) used.add(c)
  const clusters = allClusters ? overview.clusters.map((c) => c.name) : [...used].sort()
  return (
    <section>
      <div class="toolbar">
        <h2>Placements</h2>
        <span class="muted">
          {overview.placements.length} placements on {used.size} clusters
        </span>
        <input placeholder="filter placements" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        <label>
          <input type="checkbox" checked={allClusters} onChange={(e) => setAllClusters(e.currentTarget.checked)} /> all clusters
        </label>
        <span class="legend">
          {states.map((s) => (
            <StateBadge key={s} state={s} />
          ))}
        </span>
      </div>
      {placements.length === 0 ? (
        <p class="muted">No placements in {ws}{filter ? ' for this filter' : ''}.</p>
      ) : (
        <VirtualGrid
          rows={placements}
          columns={clusters}
          rowHeight={30}
          colWidth={110}
          headWidth={300}
          headHeight={34}
          height="calc(100vh - 150px)"
          rowHead={(p) => (
            <a class="prow" href={href(ws, 'placement', p.namespace, p.name)} data-placement={(p.namespace ? p.namespace + '/' : '') + p.name}>
              <StateBadge state={p.state} reason={p.reason} /> {p.namespace ? p.namespace + '/' : ''}
              {p.name} <span class="muted">{p.policy}</span>
            </a>
          )}
          colHead={(c) => <span title={c}>{c}</span>}
          cell={(p, c) => {
            const cell = p.cells[c]
            if (!cell) return null
            return (
              <span class={'cell s-' + cell.state.replace(' ', '-')} title={`${c}: ${cell.state}${cell.reason ? ' — ' + cell.reason : ''}`} data-cell={`${p.name}@${c}`} data-state={cell.state}>
                {cell.state}
              </span>
            )
          }}
        />
      )}
    </section>
  )
}
