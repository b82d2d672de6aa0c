import { useState } from 'preact/hooks'
import { post } from './api.js'

// SignIn takes a bearer token and the workspace it belongs to; the server
// checks it with the hub and keeps it, the browser keeps only a session
// cookie it cannot read.
export function SignIn({ onSignedIn }) {
  const [token, setToken] = useState('')
  const [workspace, setWorkspace] = useState('')
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const submit = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError('')
    try {
      onSignedIn(await post('/api/signin', { token, workspace }))
    } catch (err) {
      setError(err.message)
    }
    setBusy(false)
  }
  return (
    <form class="signin" onSubmit={submit}>
      <h1>Fleetplane board</h1>
      <p class="muted">Sign in with a token the hub accepts in your workspace. The token stays on the board's server.</p>
      <label>
        Workspace
        <input name="workspace" placeholder="root:teams:team-a" value={workspace} onInput={(e) => setWorkspace(e.currentTarget.value)} />
      </label>
      <label>
        Token
        <input name="token" type="password" autocomplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Sign in
      </button>
      {error && <p class="error">{error}</p>}
    </form>
  )
}
