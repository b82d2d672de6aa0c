// Calls to the board's API. The session is a cookie the browser cannot
// read; changes carry the header the server requires of the board's page.
export class APIError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

async function answer(res) {
  if (res.status === 204) return null
  const body = await res.json().catch(() => ({ error: res.statusText }))
  if (!res.ok) throw new APIError(res.status, body.error || res.statusText)
  return body
}

export async function get(path, params = {}) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''))
  const url = q.toString() ? `${path}?${q}` : path
  return answer(await fetch(url, { credentials: 'same-origin' }))
}

export async function post(path, body) {
  return answer(
    await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Fleet-Board': '1' },
      body: JSON.stringify(body || {}),
    }),
  )
}
