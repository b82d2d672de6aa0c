// Package board serves the fleet board: a web page that shows a
// workspace's clusters, placements, rollouts and events, live, with the
// caller's own credentials. The page is built with Vite (board/web) and
// embedded; its API aggregates on the server from informers opened per
// signed-in session and workspace, and tells the page of changes over
// Server-Sent Events.
package board

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"

	kcptenancyv1alpha1 "github.com/kcp-dev/kcp/sdk/apis/tenancy/v1alpha1"
	"github.com/kcp-dev/logicalcluster/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	inventoryv1alpha1 "sigs.k8s.io/cluster-inventory-api/apis/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/fleetplane/fleetplane/apis/cluster/v1beta1"
	placementv1beta1 "github.com/fleetplane/fleetplane/apis/placement/v1beta1"
	tenancyv1alpha1 "github.com/fleetplane/fleetplane/apis/tenancy/v1alpha1"
	"github.com/fleetplane/fleetplane/internal/approval"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, clusterv1beta1.AddToScheme,
		placementv1beta1.AddToScheme, tenancyv1alpha1.AddToScheme, inventoryv1alpha1.AddToScheme, kcptenancyv1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

const (
	// watchIdle stops a workspace's informers this long after the last
	// browser that showed it went away.
	watchIdle = 2 * time.Minute
	// keepAlive is how often an idle event stream says it is alive, so that
	// proxies do not close it.
	keepAlive = 25 * time.Second
	// csrfHeader must be on every request that changes something: a page of
	// another origin cannot send it without the board's consent.
	csrfHeader = "X-Fleet-Board"
)

// Server serves the board's page and its API.
type Server struct {
	// base reaches the hub (its URL without a workspace, and how to trust
	// it); its credentials, if any, are never used for a session signed in
	// with a token.
	base     *rest.Config
	sessions *sessions
	watches  *watches
	mux      *http.ServeMux
}

// New returns a board for the hub that base reaches.
func New(base *rest.Config) *Server {
	s := &Server{base: base, watches: newWatches(), mux: http.NewServeMux()}
	s.sessions = newSessions(s.watches.closeSession)
	page, err := fs.Sub(webFS, "web/dist")
	if err != nil {
		panic(err)
	}
	s.mux.Handle("GET /", secured(http.FileServerFS(page)))
	s.mux.HandleFunc("GET /login", s.login)
	s.mux.HandleFunc("POST /api/signin", s.signIn)
	s.mux.HandleFunc("POST /api/signout", s.withSession(s.signOut))
	s.mux.HandleFunc("GET /api/session", s.withSession(s.session))
	s.mux.HandleFunc("GET /api/view", s.withSession(s.view))
	s.mux.HandleFunc("GET /api/stream", s.withSession(s.stream))
	s.mux.HandleFunc("POST /api/approve", s.withSession(s.approve))
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Link returns the path of a one-time link that signs its opener in as
// whoever config authenticates as (the one who started the board), in the
// workspace at home, and who that is.
func (s *Server) Link(ctx context.Context, home logicalcluster.Path, config *rest.Config) (string, string, error) {
	user, err := whoAmI(ctx, config, home)
	if err != nil {
		return "", "", err
	}
	return "/login?token=" + s.sessions.link(user, home, config), user, nil
}

// Run ends idle sessions and stops unused watches until ctx is done, and
// then stops them all.
func (s *Server) Run(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.watches.closeAll()
			return
		case <-t.C:
			s.sessions.expire()
			s.watches.stopIdle(watchIdle)
		}
	}
}

func secured(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'")
		h.ServeHTTP(w, r)
	})
}

// inWorkspace points config at the workspace at path.
func inWorkspace(config *rest.Config, path logicalcluster.Path) *rest.Config {
	cfg := rest.CopyConfig(config)
	cfg.Host = strings.TrimSuffix(cfg.Host, "/") + path.RequestPath()
	return cfg
}

// login redeems a one-time link.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.sessions.redeem(r.URL.Query().Get("token"))
	if !ok {
		http.Error(w, "This sign-in link is unknown or was used already: each link works once. Run `kubectl fleet board` again for a new one, or sign in with a token.", http.StatusForbidden)
		return
	}
	setSessionCookie(w, r, sess.id)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

type signInRequest struct {
	Token     string `json:"token"`
	Workspace string `json:"workspace"`
}

type sessionResponse struct {
	User string `json:"user"`
	Home string `json:"home"`
	// Workspaces are those the caller may switch to: root:fleet and the
	// teams' for a platform admin, the home workspace for a team.
	Workspaces []string `json:"workspaces"`
}

// signIn opens a session for a bearer token, checked by the hub in the
// workspace the caller names; the token stays on the server.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	if !changeAllowed(w, r) {
		return
	}
	var req signInRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "the sign-in request is not JSON with token and workspace: "+err.Error())
		return
	}
	path, err := workspacePath(req.Workspace)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(req.Token) == "" {
		writeError(w, http.StatusBadRequest, "no token: paste a bearer token the hub accepts in "+path.String())
		return
	}
	cfg := tokenConfig(s.base, strings.TrimSpace(req.Token))
	user, err := whoAmI(r.Context(), cfg, path)
	if err != nil {
		writeError(w, http.StatusUnauthorized, err.Error())
		return
	}
	sess := s.sessions.open(user, path, cfg)
	setSessionCookie(w, r, sess.id)
	s.session(w, r, sess)
}

func (s *Server) signOut(w http.ResponseWriter, r *http.Request, sess *session) {
	if !changeAllowed(w, r) {
		return
	}
	s.sessions.close(sess.id)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) session(w http.ResponseWriter, r *http.Request, sess *session) {
	writeJSON(w, sessionResponse{User: sess.user, Home: sess.home.String(), Workspaces: s.workspacesOf(r.Context(), sess)})
}

// workspacesOf lists the workspaces a session may switch to: those it can
// list under root:teams, and root:fleet when it can, besides its own.
func (s *Server) workspacesOf(ctx context.Context, sess *session) []string {
	out := []string{sess.home.String()}
	c, err := client.New(inWorkspace(sess.config, tenancyv1alpha1.TeamsWorkspace), client.Options{Scheme: scheme})
	if err != nil {
		return out
	}
	var list kcptenancyv1alpha1.WorkspaceList
	if err := c.List(ctx, &list); err != nil {
		return out // a team may not list the teams' workspaces, and needs not
	}
	seen := map[string]bool{sess.home.String(): true}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(tenancyv1alpha1.FleetWorkspace.String())
	for _, ws := range list.Items {
		add(tenancyv1alpha1.TeamsWorkspace.Join(ws.Name).String())
	}
	return out
}

// withSession passes on the request's session, or answers 401.
func (s *Server) withSession(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.sessions.of(r)
		if !ok {
			writeError(w, http.StatusUnauthorized, "not signed in: open the link `kubectl fleet board` printed, or sign in with a token")
			return
		}
		h(w, r, sess)
	}
}

// pathOf is the workspace a request names, or the session's own.
func (s *Server) pathOf(r *http.Request, sess *session) (logicalcluster.Path, error) {
	if p := r.URL.Query().Get("workspace"); p != "" {
		return workspacePath(p)
	}
	return sess.home, nil
}

// watchOf returns the session's watch of the workspace the request names
// (the session's own if it names none), or answers with why not.
func (s *Server) watchOf(w http.ResponseWriter, r *http.Request, sess *session) (*workspaceWatch, bool) {
	path, err := s.pathOf(r, sess)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	watch, err := s.watches.get(r.Context(), sess, path)
	if err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return nil, false
	}
	return watch, true
}

// viewOf computes the view a request names: clusters, placements, events,
// or placement (with namespace and name).
func (s *Server) viewOf(ctx context.Context, sess *session, watch *workspaceWatch, q url.Values) (any, error) {
	switch q.Get("view") {
	case "clusters":
		return watch.clustersView(ctx)
	case "placements":
		return watch.placementsView(ctx)
	case "events":
		return watch.eventsView(ctx)
	case "placement":
		return watch.placement(ctx, q.Get("namespace"), q.Get("name"), func(ctx context.Context, kind, namespace string) bool {
			return watch.mayApprove(ctx, sess.config, kind, namespace)
		})
	}
	return nil, badRequest{fmt.Sprintf("no view %q: ask for clusters, placements, events or placement", q.Get("view"))}
}

// view answers one view, once.
func (s *Server) view(w http.ResponseWriter, r *http.Request, sess *session) {
	watch, ok := s.watchOf(w, r, sess)
	if !ok {
		return
	}
	v, err := s.viewOf(r.Context(), sess, watch, r.URL.Query())
	if err != nil {
		writeError(w, errorStatus(err), err.Error())
		return
	}
	writeJSON(w, v)
}

// stream sends a view as Server-Sent Events: at once, then each time a
// change in the workspace changes it. A change that leaves the view as it
// was (a heartbeat, a status the view does not show) sends nothing.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sess *session) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "this server cannot stream")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	fmt.Fprint(w, "retry: 2000\n\n")
	path, err := s.pathOf(r, sess)
	var watch *workspaceWatch
	if err == nil {
		watch, err = s.watches.get(r.Context(), sess, path)
	}
	if err != nil {
		// An EventSource cannot read an error's body: the page hears it as
		// an event, and the browser asks again in half a minute (access may
		// be granted meanwhile), not every two seconds.
		fmt.Fprint(w, "retry: 30000\n\n")
		sendEvent(w, flusher, "failure", map[string]string{"error": err.Error()})
		return
	}
	changes, done := watch.subscribe()
	defer done()
	var last [sha256.Size]byte
	for {
		v, err := s.viewOf(r.Context(), sess, watch, r.URL.Query())
		if err != nil {
			sendEvent(w, flusher, "failure", map[string]string{"error": err.Error()})
		} else if data, err := json.Marshal(v); err == nil && sha256.Sum256(data) != last {
			last = sha256.Sum256(data)
			fmt.Fprintf(w, "event: view\ndata: %s\n\n", data)
			flusher.Flush()
		}
		if !nextChange(r.Context(), w, flusher, changes) {
			return
		}
	}
}

// nextChange waits for the next change, saying that the stream is alive
// meanwhile; false when the page went away.
func nextChange(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, changes <-chan uint64) bool {
	ping := time.NewTicker(keepAlive)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-changes:
			return true
		case <-ping.C:
			fmt.Fprint(w, ": alive\n\n")
			flusher.Flush()
		}
	}
}

func sendEvent(w http.ResponseWriter, flusher http.Flusher, event string, v any) {
	data, _ := json.Marshal(v)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	flusher.Flush()
}

type approveRequest struct {
	Workspace string `json:"workspace"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// approve approves a stage with the caller's credentials: the hub decides
// whether the caller may.
func (s *Server) approve(w http.ResponseWriter, r *http.Request, sess *session) {
	if !changeAllowed(w, r) {
		return
	}
	var req approveRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "the approval is not JSON with workspace, kind, namespace and name: "+err.Error())
		return
	}
	path, err := workspacePath(req.Workspace)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	obj, err := approval.NewRequest(req.Kind)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	c, err := client.New(inWorkspace(sess.config, path), client.Options{Scheme: scheme})
	if err == nil {
		err = c.Get(r.Context(), client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, obj)
	}
	if err == nil {
		err = approval.Approve(r.Context(), c, obj, "approved on the fleet board by "+sess.user)
	}
	if err != nil {
		writeError(w, statusOf(err), fmt.Sprintf("approving %s %s in %s: %v", req.Kind, qualified(req.Namespace, req.Name), path, err))
		return
	}
	klog.FromContext(r.Context()).V(2).Info("Approved a stage on the board", "workspace", path, "kind", req.Kind, "namespace", req.Namespace, "name", req.Name, "user", sess.user)
	w.WriteHeader(http.StatusNoContent)
}

func workspacePath(p string) (logicalcluster.Path, error) {
	path := logicalcluster.NewPath(strings.TrimPrefix(strings.TrimSpace(p), ":"))
	if !path.IsValid() || path.Empty() {
		return path, fmt.Errorf("%q is not a workspace path: write it as kubectl ws shows it, e.g. root:teams:team-a or root:fleet", p)
	}
	return path, nil
}

// changeAllowed refuses a change that lacks the board's header: a form or
// a script of another site cannot add it.
func changeAllowed(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(csrfHeader) == "" {
		writeError(w, http.StatusForbidden, "requests that change something must carry the "+csrfHeader+" header, as the board's page sends it")
		return false
	}
	return true
}

func statusOf(err error) int {
	if status, ok := err.(apierrors.APIStatus); ok && status.Status().Code != 0 {
		return int(status.Status().Code)
	}
	return http.StatusInternalServerError
}

// notFound is a view of an object that is not there.
type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

// badRequest is a request for a view that does not exist.
type badRequest struct{ msg string }

func (e badRequest) Error() string { return e.msg }

func errorStatus(err error) int {
	var nf notFound
	var br badRequest
	switch {
	case errors.As(err, &nf):
		return http.StatusNotFound
	case errors.As(err, &br):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func errNotFound(msg string) error { return notFound{msg} }

// notFoundOr turns a cache's not-found into notFound.
func notFoundOr(err error, msg string) error {
	if apierrors.IsNotFound(err) {
		return notFound{msg}
	}
	return err
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		klog.Background().V(2).Info("Board response not written", "err", err)
	}
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
