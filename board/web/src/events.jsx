export function EventTable({ events }) {
  if (!events || events.length === 0) return <p class="muted">No events.</p>
  return (
    <table class="events">
      <thead>
        <tr>
          <th>when</th>
          <th>type</th>
          <th>reason</th>
          <th>object</th>
          <th>message</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e, i) => (
          <tr key={i} class={e.type === 'Warning' ? 'warn' : ''}>
            <td>{new Date(e.time).toLocaleTimeString()}</td>
            <td>{e.type}</td>
            <td>{e.reason}</td>
            <td>{e.object}</td>
            <td>
              {e.message}
              {e.count > 1 ? ` (×${e.count})` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

// Events is the workspace's newest events.
export function Events({ data }) {
  return (
    <section>
      <div class="toolbar">
        <h2>Recent events</h2>
      </div>
      <EventTable events={data.events} />
    </section>
  )
}
