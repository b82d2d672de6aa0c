package framework

import (
	"context"
	"fmt"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// StartChromium starts Debian's headless Chromium (which `make test`
// installs) with a profile of its own in userDataDir, without the
// background traffic this machine's closed network refuses. The returned
// context drives its first tab; stop ends the browser.
func StartChromium(userDataDir string) (tab context.Context, stop func(), err error) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		return nil, nil, fmt.Errorf("the board's browser checks need Debian's chromium (/usr/bin/chromium): run `make browser` (make test does), or `apt-get install chromium`")
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.UserDataDir(userDataDir),
		chromedp.WindowSize(1400, 900), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	tab, cancelTab := chromedp.NewContext(alloc)
	stop = func() { cancelTab(); cancelAlloc() }
	// The first run starts the browser, for as long as tab lives.
	if err := chromedp.Do(tab, chromedp.Navigate("about:blank")); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return tab, stop, nil
}
