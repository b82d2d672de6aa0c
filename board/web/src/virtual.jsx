import { useEffect, useRef, useState } from 'preact/hooks'

// useViewport follows an element's scroll position and size, so that lists
// draw only what is in view: a fleet of 1,000 clusters and 1,000
// placements draws a few hundred cells, not a million.
function useViewport() {
  const ref = useRef(null)
  const [vp, setVp] = useState({ top: 0, left: 0, width: 800, height: 600 })
  useEffect(() => {
    const el = ref.current
    if (!el) return
    const update = () => setVp({ top: el.scrollTop, left: el.scrollLeft, width: el.clientWidth, height: el.clientHeight })
    update()
    el.addEventListener('scroll', update, { passive: true })
    const ro = new ResizeObserver(update)
    ro.observe(el)
    return () => {
      el.removeEventListener('scroll', update)
      ro.disconnect()
    }
  }, [])
  return [ref, vp]
}

const overscan = 4

function range(offset, extent, size, count) {
  const first = Math.max(0, Math.floor(offset / size) - overscan)
  const last = Math.min(count, Math.ceil((offset + extent) / size) + overscan)
  return [first, last]
}

// VirtualList draws the rows of items in view; each row is rowHeight tall.
export function VirtualList({ items, rowHeight, height, render, class: cls }) {
  const [ref, vp] = useViewport()
  const [first, last] = range(vp.top, vp.height, rowHeight, items.length)
  const rows = []
  for (let i = first; i < last; i++) {
    rows.push(
      <div key={i} class="vrow" style={{ top: i * rowHeight, height: rowHeight }}>
        {render(items[i], i)}
      </div>,
    )
  }
  return (
    <div ref={ref} class={'vscroll ' + (cls || '')} style={{ height }}>
      <div style={{ height: items.length * rowHeight, position: 'relative' }}>{rows}</div>
    </div>
  )
}

// VirtualGrid draws the cells in view of a rows x columns grid, with the
// row headers on the left and the column headers on top kept in view.
export function VirtualGrid({ rows, columns, rowHeight, colWidth, headWidth, headHeight, height, rowHead, colHead, cell }) {
  const [ref, vp] = useViewport()
  const [r0, r1] = range(vp.top, vp.height - headHeight, rowHeight, rows.length)
  const [c0, c1] = range(vp.left, vp.width - headWidth, colWidth, columns.length)
  const out = []
  for (let c = c0; c < c1; c++) {
    out.push(
      <div key={'h' + c} class="gcolhead" style={{ left: headWidth + c * colWidth, top: vp.top, width: colWidth, height: headHeight }}>
        {colHead(columns[c])}
      </div>,
    )
  }
  for (let r = r0; r < r1; r++) {
    const y = headHeight + r * rowHeight
    out.push(
      <div key={'r' + r} class="growhead" style={{ top: y, left: vp.left, width: headWidth, height: rowHeight }}>
        {rowHead(rows[r])}
      </div>,
    )
    for (let c = c0; c < c1; c++) {
      out.push(
        <div key={r + ':' + c} class="gcell" style={{ top: y, left: headWidth + c * colWidth, width: colWidth, height: rowHeight }}>
          {cell(rows[r], columns[c])}
        </div>,
      )
    }
  }
  out.push(<div key="corner" class="gcorner" style={{ top: vp.top, left: vp.left, width: headWidth, height: headHeight }} />)
  return (
    <div ref={ref} class="vscroll grid" style={{ height }}>
      <div style={{ position: 'relative', width: headWidth + columns.length * colWidth, height: headHeight + rows.length * rowHeight }}>
        {out}
      </div>
    </div>
  )
}
