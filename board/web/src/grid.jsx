import { useMemo, useState } from 'preact/hooks'
import { href } from './route.js'
import { VirtualGrid } from './virtual.jsx'

export function StateBadge({ state, reason }) {
  return (
    <span class={'state s-' + state.replace(' ', '-')} title={reason || ''}>
      {state}
    </span>
  )
}

// rowsOf turns the server's compact rows (cells as [cluster, state,
// reason?] indexes) into rows with a cell per cluster name.
function rowsOf(data) {
  return data.placements.map((p) => {
    const cells = {}
    for (const [c, st, reason] of p.cells) cells[data.clusters[c]] = { state: data.states[st], reason }
    return { ...p, cells }
  })
}

// Grid shows placements against clusters, a cell per placement on a
// cluster, coloured by its state; the reason shows on hover.
export function Grid({ data, ws }) {
  const [filter, setFilter] = useState('')
  const [allClusters, setAllClusters] = useState(false)
  const rows = useMemo(() => rowsOf(data), [data])
  const f = filter.toLowerCase()
  const placements = rows.filter((p) => !f || `${p.namespace || ''}/${p.name}`.toLowerCase().includes(f))
  const used = new Set()
  for (const p of placements) for (const c in p.cells) used.add(c)
  const clusters = allClusters ? data.clusters : [...used].sort()
  return (
    <section>
      <div class="toolbar">
        <h2>Placements</h2>
        <span class="muted">
          {rows.length} placements on {used.size} clusters
        </span>
        <input placeholder="filter placements" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        <label>
          <input type="checkbox" checked={allClusters} onChange={(e) => setAllClusters(e.currentTarget.checked)} /> all clusters
        </label>
        <span class="legend">
          {data.states.map((s) => (
            <StateBadge key={s} state={s} />
          ))}
        </span>
      </div>
      {placements.length === 0 ? (
        <p class="muted">
          No placements in {ws}
          {filter ? ' for this filter' : ''}.
        </p>
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
