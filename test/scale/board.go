package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/kcp-dev/logicalcluster/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	"github.com/fleetplane/fleetplane/board"
	"github.com/fleetplane/fleetplane/internal/localfleet"
	"github.com/fleetplane/fleetplane/test/e2e/framework"
)

// probeName is the placement whose arrival on the page is timed.
const probeName = "board-probe"

// boardFigures times the fleet board, as headless Chromium shows it, over
// one workspace of --board placements PickN(--board-pick) each: how long
// the grid takes to show, the longest frame while it scrolls through the
// grid, and how long a new placement takes to reach the page.
func (f *fleet) boardFigures(ctx context.Context, h *localfleet.Hub, res *results) error {
	l, _, err := f.newLoad(ctx, h, "board", f.opts.board, f.opts.boardPick, f.opts.board)
	if err != nil {
		return err
	}
	ws := l.workspaces[0]
	srv := board.New(h.Admin)
	link, _, err := srv.Link(ctx, logicalcluster.NewPath(ws), h.Admin)
	if err != nil {
		return err
	}
	ln, err := board.ListenLoopback("127.0.0.1:0")
	if err != nil {
		return err
	}
	serveCtx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	go func() { _ = srv.Serve(serveCtx, ln) }()
	profile, err := os.MkdirTemp("", "scale-board-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(profile)
	tab, stopBrowser, err := framework.StartChromium(filepath.Join(profile, "profile"))
	if err != nil {
		return err
	}
	defer stopBrowser()
	note := fmt.Sprintf("%d placements PickN(%d) in one workspace, %d members; headless Chromium on the same machine", f.opts.board, f.opts.boardPick, f.opts.members)
	start := time.Now()
	if err := chromedp.Do(tab, chromedp.Navigate("http://"+ln.Addr().String()+link)); err != nil {
		return fmt.Errorf("signing in on the board: %w", err)
	}
	if err := waitFor(ctx, tab, `!!document.querySelector('.toolbar h2')`); err != nil {
		return fmt.Errorf("the first view did not show: %w", err)
	}
	res.add("board_first_view_shown", time.Since(start).Seconds(), "s", "", "from opening the sign-in link to the first view, the board's informers on the workspace started; "+note)

	start = time.Now()
	if err := chromedp.Do(tab, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = '#/%s/placements'`, ws))); err != nil {
		return err
	}
	if err := waitFor(ctx, tab, `document.querySelectorAll('[data-placement]').length > 0`); err != nil {
		return fmt.Errorf("the grid did not show: %w", err)
	}
	res.add("board_grid_shown", time.Since(start).Seconds(), "s", "", "from switching to the grid to its first rows, the informers already running; "+note)

	worst, err := chromedp.Run(tab, chromedp.Evaluate[float64](`new Promise(done => {
		const grid = document.querySelector('.vscroll.grid')
		let last = performance.now(), worst = 0, frames = 0
		const step = (now) => {
			worst = Math.max(worst, now - last)
			last = now
			grid.scrollTop += 900
			grid.scrollLeft += 330
			if (++frames < 60) requestAnimationFrame(step); else done(worst)
		}
		requestAnimationFrame(step)
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	res.add("board_grid_scroll_worst_frame", worst, "ms", "", "longest of 60 frames scrolling 900 px down and 330 px right each; "+note)

	// Only the probe's row is drawn once the filter names it: the page
	// shows it when the view that holds it arrives.
	if err := chromedp.Do(tab, chromedp.SendKeys(chromedp.CSS(`.toolbar input`), probeName)); err != nil {
		return err
	}
	c := l.clients[0]
	start = time.Now()
	for _, o := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: probeName}},
		&placementv1beta1.ClusterResourcePlacement{ObjectMeta: metav1.ObjectMeta{Name: probeName}, Spec: placementv1beta1.PlacementSpec{
			ResourceSelectors: []placementv1beta1.ResourceSelectorTerm{{Version: "v1", Kind: "Namespace", Name: probeName}},
			Policy:            &placementv1beta1.PlacementPolicy{PlacementType: placementv1beta1.PickNPlacementType, NumberOfClusters: ptr.To(int32(f.opts.boardPick))},
		}},
	} {
		if err := c.Create(ctx, o); err != nil {
			return err
		}
	}
	if err := waitFor(ctx, tab, fmt.Sprintf(`!!document.querySelector('[data-placement=%q]')`, probeName)); err != nil {
		return fmt.Errorf("the new placement did not reach the page: %w", err)
	}
	res.add("board_change_shown", time.Since(start).Seconds(), "s", "", "from creating a placement to its row on the page (goal 2 s); "+note)
	return nil
}

// waitFor polls the page every 20 ms until script is true, for at most
// two minutes.
func waitFor(ctx context.Context, tab context.Context, script string) error {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(tab, chromedp.Evaluate[bool](script))
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return fmt.Errorf("still not %s after two minutes", script)
}
