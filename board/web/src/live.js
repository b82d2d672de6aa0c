import { useEffect, useState } from 'preact/hooks'

// useLive shows a view the server streams (Server-Sent Events): the view
// at once, then again each time a change in the workspace changes it.
// Nothing polls. After a lost connection the browser reconnects by itself
// and the server sends the view as it is then.
export function useLive(params) {
  const key = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== '')).toString()
  const [state, setState] = useState({ data: null, error: null, loading: true })
  useEffect(() => {
    setState({ data: null, error: null, loading: true })
    const stream = new EventSource(`/api/stream?${key}`)
    stream.addEventListener('view', (e) => setState({ data: JSON.parse(e.data), error: null, loading: false }))
    // The server could not show the view (no access, no such placement
    // yet): it says why, and sends the view once it can.
    stream.addEventListener('failure', (e) => setState((s) => ({ data: s.data, error: JSON.parse(e.data).error, loading: false })))
    stream.onerror = () => {
      if (stream.readyState === EventSource.CLOSED) setState((s) => ({ ...s, error: 'the board is not reachable', loading: false }))
    }
    return () => stream.close()
  }, [key])
  return state
}
