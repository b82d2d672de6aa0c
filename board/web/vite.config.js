import { defineConfig } from 'vite'

// Preact's JSX runtime, no plugin needed; the page is served by the Go
// binary from dist/, so asset names carry no base path.
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 200 },
  server: { proxy: { '/api': 'http://127.0.0.1:8090', '/login': 'http://127.0.0.1:8090' } },
})
