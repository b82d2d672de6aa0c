import { useEffect, useState } from 'preact/hooks'

// Routes live in the URL's hash: #/<workspace>/<view>[/<namespace>/<name>],
// so every view can be linked to and the back button works.
export function parse(hash) {
  const [ws, view, ns, name] = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent)
  return { ws: ws || '', view: view || 'clusters', namespace: ns === '_' ? '' : ns || '', name: name || '' }
}

export function href(ws, view, namespace, name) {
  const parts = [ws, view]
  if (name) parts.push(namespace || '_', name)
  return '#/' + parts.map(encodeURIComponent).join('/')
}

export function useRoute() {
  const [route, setRoute] = useState(parse(location.hash))
  useEffect(() => {
    const on = () => setRoute(parse(location.hash))
    addEventListener('hashchange', on)
    // The hash may have changed between the first render and now.
    on()
    return () => removeEventListener('hashchange', on)
  }, [])
  return route
}
