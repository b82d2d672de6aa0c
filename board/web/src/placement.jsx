import { useState } from 'preact/hooks'
import { post } from './api.js'
import { EventTable } from './events.jsx'
import { StateBadge } from './grid.jsx'
import { useLive } from './live.js'
import { href } from './route.js'
import { VirtualList } from './virtual.jsx'

function Conditions({ conditions }) {
  return (
    <table class="conds">
      <tbody>
        {conditions.map((c) => (
          <tr key={c.type} class={c.status === 'False' ? 'bad' : ''}>
            <td>{c.type}</td>
            <td>{c.status}</td>
            <td>{c.reason}</td>
            <td class="msg">{c.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function ApproveButton({ ws, a, namespace }) {
  const [state, setState] = useState({ busy: false, error: '' })
  const approve = async () => {
    setState({ busy: true, error: '' })
    try {
      await post('/api/approve', { workspace: ws, kind: a.kind, namespace, name: a.name })
      setState({ busy: false, error: '' })
    } catch (e) {
      setState({ busy: false, error: e.message })
    }
  }
  return (
    <span>
      <button class="approve" data-approval={a.name} disabled={state.busy} onClick={approve}>
        Approve
      </button>
      {state.error && <span class="error">{state.error}</span>}
    </span>
  )
}

function Approval({ ws, a, namespace }) {
  let what = 'not requested yet'
  if (a.approved) what = 'approved'
  else if (a.created) what = 'waiting for approval'
  return (
    <div class={'approval' + (a.approved ? ' done' : '')} data-approval-state={what}>
      {a.when} stage: {what}
      {a.created && !a.approved && (a.canApprove ? <ApproveButton ws={ws} a={a} namespace={namespace} /> : <span class="muted"> (you may not approve)</span>)}
    </div>
  )
}

function Runs({ ws, runs }) {
  if (!runs || runs.length === 0) return null
  return (
    <div>
      <h3>Staged rollout</h3>
      {runs.map((run) => {
        const done = run.conditions.find((c) => c.type === 'Succeeded')
        return (
          <div class="run" key={run.name}>
            <div>
              run <b>{run.name}</b> {done ? (done.status === 'True' ? 'succeeded' : 'failed: ' + done.message) : 'in progress'}
            </div>
            <div class="stages">
              {(run.stages || []).map((s) => (
                <div class={'stage st-' + s.state.replace(' ', '-')} key={s.name} data-stage={s.name} data-stage-state={s.state}>
                  <div class="stage-head">
                    <b>{s.name}</b> <span class="muted">{s.state}</span>
                  </div>
                  {(s.approvals || [])
                    .filter((a) => a.when === 'before')
                    .map((a) => (
                      <Approval key={a.name} ws={ws} a={a} namespace={run.namespace} />
                    ))}
                  {(s.clusters || []).map((c) => (
                    <div key={c.name} class="stage-cluster">
                      {c.name}: {c.state}
                    </div>
                  ))}
                  {(s.approvals || [])
                    .filter((a) => a.when === 'after')
                    .map((a) => (
                      <Approval key={a.name} ws={ws} a={a} namespace={run.namespace} />
                    ))}
                </div>
              ))}
            </div>
          </div>
        )
      })}
    </div>
  )
}

function ClusterRow({ c }) {
  const lines = [
    ...(c.overrides || []).map((o) => ['override', o]),
    ...(c.failed || []).map((f) => ['failed', f]),
    ...(c.drifted || []).map((f) => ['drifted', f]),
    ...(c.diffed || []).map((f) => ['diffed', f]),
    ...(c.workloads || []).map((f) => ['workload', f]),
  ]
  return (
    <div class="crow" data-cluster-row={c.name}>
      <div class="ccol name">{c.name}</div>
      <div class="ccol">{c.cell ? <StateBadge state={c.cell.state} reason={c.cell.reason} /> : <span class="muted">not picked</span>}</div>
      <div class="ccol why" title={c.score || ''}>
        {c.picked ? 'picked' : 'not picked'}
        {c.decision ? ': ' + c.decision : ''}
      </div>
      <div class="ccol detail">
        {c.cell && c.cell.reason && <div class={c.cell.state === 'failed' ? 'error' : 'muted'}>{c.cell.reason}</div>}
        {lines.map(([k, v], i) => (
          <div key={i}>
            <span class="muted">{k}:</span> {v}
          </div>
        ))}
      </div>
    </div>
  )
}

// Placement is a placement's page: its conditions, its staged rollout with
// approvals, each cluster the scheduler considered and how it fares there,
// and the placement's events.
export function Placement({ ws, namespace, name }) {
  const { data: d, error, loading } = useLive({ workspace: ws, view: 'placement', namespace, name })
  if (loading) return <p class="muted">Loading…</p>
  if (!d) return <p class="error">{error}</p>
  return (
    <section class="placement" data-placement-page={name}>
      <div class="toolbar">
        <a href={href(ws, 'placements')}>← placements</a>
        <h2>
          {d.kind} {d.namespace ? d.namespace + '/' : ''}
          {d.name}
        </h2>
        <StateBadge state={d.state} reason={d.reason} />
        <span class="muted">
          {d.policy} · {d.strategy} · snapshot {d.resourceIndex || '-'} · available on {d.available}
        </span>
      </div>
      {error && <p class="error">{error}</p>}
      {d.reason && <p class={d.state === 'failed' ? 'error' : 'muted'}>{d.reason}</p>}
      <Conditions conditions={d.conditions} />
      <Runs ws={ws} runs={d.runs} />
      {d.workloads && <p>Workloads: {d.workloads.summary}</p>}
      <h3>Clusters</h3>
      <VirtualList items={d.clusters} rowHeight={92} height={Math.min(600, 92 * d.clusters.length + 4)} render={(c) => <ClusterRow c={c} />} />
      <h3>Events</h3>
      <EventTable events={d.events} />
    </section>
  )
}
