import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { get, post } from './api.js'
import { Clusters } from './clusters.jsx'
import { Events } from './events.jsx'
import { Grid } from './grid.jsx'
import { useLive } from './live.js'
import { Placement } from './placement.jsx'
import { href, useRoute } from './route.js'
import { SignIn } from './signin.jsx'
import './styles.css'

const views = [
  ['clusters', 'Clusters'],
  ['placements', 'Placements'],
  ['events', 'Events'],
]

const viewComponents = { clusters: Clusters, placements: Grid, events: Events }

// View shows one of the workspace's views, live.
function View({ ws, view }) {
  const { data, error, loading } = useLive({ workspace: ws, view })
  const Component = viewComponents[view]
  if (!Component) return <p class="error">No view {view}.</p>
  if (loading) return <p class="muted">Loading {ws}…</p>
  if (!data) return <p class="error">{error}</p>
  return (
    <div>
      {error && <p class="error">{error}</p>}
      <Component data={data} ws={ws} />
    </div>
  )
}

function Board({ session, onSignOut }) {
  const route = useRoute()
  const ws = route.ws || session.home
  const signOut = async () => {
    await post('/api/signout').catch(() => {})
    onSignOut()
  }
  return (
    <div>
      <header>
        <b>Fleetplane</b>
        <select
          aria-label="workspace"
          value={ws}
          onChange={(e) => {
            location.hash = href(e.currentTarget.value, route.view === 'placement' ? 'placements' : route.view)
          }}
        >
          {[...new Set([ws, ...session.workspaces])].map((w) => (
            <option key={w} value={w}>
              {w}
            </option>
          ))}
        </select>
        <nav>
          {views.map(([v, label]) => (
            <a key={v} href={href(ws, v)} class={route.view === v ? 'active' : ''}>
              {label}
            </a>
          ))}
        </nav>
        <span class="user">{session.user}</span>
        <button onClick={signOut}>Sign out</button>
      </header>
      <main>{route.view === 'placement' ? <Placement ws={ws} namespace={route.namespace} name={route.name} /> : <View key={ws + route.view} ws={ws} view={route.view} />}</main>
    </div>
  )
}

function App() {
  const [session, setSession] = useState(undefined)
  const [error, setError] = useState('')
  useEffect(() => {
    get('/api/session')
      .then(setSession)
      .catch((e) => (e.status === 401 ? setSession(null) : setError(e.message)))
  }, [])
  if (error) return <p class="error">{error}</p>
  if (session === undefined) return <p class="muted">Loading…</p>
  if (session === null) return <SignIn onSignedIn={setSession} />
  return <Board session={session} onSignOut={() => setSession(null)} />
}

render(<App />, document.getElementById('app'))
