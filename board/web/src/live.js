import { useEffect, useState } from 'preact/hooks'
import { get } from './api.js'

// useLive reads a view and reads it again each time the server says the
// workspace changed (Server-Sent Events), never on a timer. Reads do not
// overlap: a change during a read starts one more read after it.
export function useLive(path, params) {
  const key = JSON.stringify([path, params])
  const [state, setState] = useState({ data: null, error: null, loading: true })
  useEffect(() => {
    let closed = false
    let reading = false
    let again = false
    const read = async () => {
      if (reading) {
        again = true
        return
      }
      reading = true
      try {
        const data = await get(path, params)
        if (!closed) setState({ data, error: null, loading: false })
      } catch (e) {
        if (!closed) setState((s) => ({ data: s.data, error: e.message, loading: false }))
      }
      reading = false
      if (again && !closed) {
        again = false
        read()
      }
    }
    setState({ data: null, error: null, loading: true })
    read()
    const stream = new EventSource(`/api/stream?${new URLSearchParams({ workspace: params.workspace })}`)
    stream.addEventListener('changed', read)
    // After a lost connection the browser reconnects by itself; what
    // changed meanwhile is read once it is back.
    let opened = false
    stream.onopen = () => {
      if (opened) read()
      opened = true
    }
    return () => {
      closed = true
      stream.close()
    }
  }, [key])
  return state
}
