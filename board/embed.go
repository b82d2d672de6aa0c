package board

import "embed"

// webFS is the page as `make board-web` builds it from board/web (Vite);
// the build is committed so that Go alone builds the binaries.
//
//go:embed all:web/dist
var webFS embed.FS
