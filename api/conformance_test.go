package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/storetest"
)

const tokDisabled = "pw_disabled_0123456789abcdef0123456789abc"

// fakeEndpoints resolves like the Caddy app: chatbot over project over
// global, 404 for unknown ids.
type fakeEndpoints struct{}

func (fakeEndpoints) Resolve(group, chatbot string) (EndpointView, error) {
	global := EndpointView{ID: "00000000-0000-4000-8000-000000000001", Name: "global", CreatedAt: store.Timestamp(time.Unix(1700000000, 0)),
		Config: EndpointConfig{Scanners: []ScannerSetting{{ID: "secrets", Enabled: "true", Blocking: "true", Force: "false", Mode: "block", Version: "1"}}}}
	switch {
	case chatbot == "bot1":
		ep := global
		ep.ID, ep.Name, ep.ChatbotID, ep.GroupID = "00000000-0000-4000-8000-000000000003", "bot1", "bot1", "p1"
		ep.Config.Packages = []ScannerSetting{{ID: "pii", Enabled: "true", Blocking: "false", Force: "false", Mode: "flag", Version: "1"}}
		ep.Config.ProviderRouting = "default"
		ep.Config.Providers = []EndpointProvider{{Default: "true", Enabled: true, ID: "openai", Name: "OpenAI", Type: "openai"}}
		return ep, nil
	case chatbot != "":
		return EndpointView{}, ErrEndpointNotFound
	case group == "p1":
		ep := global
		ep.ID, ep.Name, ep.GroupID = "00000000-0000-4000-8000-000000000002", "p1", "p1"
		return ep, nil
	case group != "":
		return EndpointView{}, ErrEndpointNotFound
	}
	return global, nil
}

// newConformanceFixture is the admin fixture plus users with e-mails, a
// disabled org, and an endpoint resolver.
func newConformanceFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, e := range []string{"carol@acme.example", "dave@acme.example", "erin@acme.example"} {
		must(f.s.CreateUser(&store.User{OrgID: "o1", Email: e, Name: strings.ToUpper(e[:1]) + e[1:strings.Index(e, "@")],
			Role: []string{store.RoleMember, store.RoleAdmin, store.RoleMember}[i], Projects: []string{"p1"}, GroupIDs: []string{"g1"}, Teams: []string{"red"}}))
	}
	must(f.s.PutOrg(&store.Org{ID: "o3", Name: "Disabled", Disabled: true}))
	must(f.s.PutUser(&store.User{ID: "dora", OrgID: "o3", Role: store.RoleOwner}))
	must(f.s.PutToken(&store.Token{Hash: store.HashToken(tokDisabled), UserID: "dora", OrgID: "o3"}))
	boot := store.HashToken(tokBoot)
	h, err := New(Config{Store: f.s, BootstrapTokenHash: &boot, BootstrapOrgID: "o1", Endpoints: fakeEndpoints{}})
	must(err)
	f.h = h
	return f
}

// serve runs one request through the handler and validates the answer
// against the document.
func serve(t *testing.T, h http.Handler, method, target, token, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", contentType)
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	validateResponse(t, r, w)
	return w
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) errorDetail {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body %s: %v", w.Body, err)
	}
	return e.Error
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

// invalidValues returns values the schema rejects, and one it accepts.
func invalidValues(s *openapi3.Schema) (bad []string, good string) {
	switch {
	case s.Type.Is("boolean"):
		return []string{"maybe", "TRUE", "1", ""}, "true"
	case s.Type.Is("integer"):
		bad = []string{"x", "1.5", ""}
		good = "1"
		if s.Min != nil {
			bad = append(bad, "0", "-1")
			good = "1"
		}
		if s.Max != nil {
			bad = append(bad, "101")
		}
		return bad, good
	case s.Format == "uuid":
		return []string{"not-a-uuid", "{" + store.NewID() + "}"}, store.NewID()
	case s.Format == "date-time":
		return []string{"yesterday", "2026-01-01"}, "2026-01-01T00:00:00Z"
	case len(s.Enum) > 0:
		return []string{"zzz"}, s.Enum[0].(string)
	case s.MinLength > 0:
		return []string{""}, "x"
	}
	return nil, "x"
}

// TestConformance walks every operation of the document. For each one the
// mux serves it checks the shared behaviour (authentication, strict
// parameters, malformed UUIDs, media type) and validates every answer
// against the document. Operations whose route is not registered yet are
// skipped by name, so they are covered as soon as they are.
func TestConformance(t *testing.T) {
	f := newConformanceFixture(t)
	c := loadContract(t)
	for _, path := range c.doc.Paths.InMatchingOrder() {
		item := c.doc.Paths.Value(path)
		for method, op := range item.Operations() {
			t.Run(method+" "+path, func(t *testing.T) {
				concrete := pathParam.ReplaceAllStringFunc(path, func(string) string { return store.NewID() })
				if _, pattern := f.h.mux.Handler(httptest.NewRequest(method, concrete, nil)); pattern == "" {
					t.Skipf("%s %s is not registered yet", method, path)
				}
				body, ctype := "", ""
				if op.RequestBody != nil {
					body, ctype = "{}", "application/json"
				}
				call := func(target, token string) *httptest.ResponseRecorder {
					t.Helper()
					return serve(t, f.h, method, target, token, ctype, body)
				}
				expect := func(name string, w *httptest.ResponseRecorder, status int, param string) {
					t.Helper()
					if w.Code != status {
						t.Errorf("%s: status %d, want %d: %s", name, w.Code, status, w.Body)
						return
					}
					if param != "" {
						if e := errorOf(t, w); e.Param != param {
							t.Errorf("%s: param %q, want %q", name, e.Param, param)
						}
					}
				}

				w := call(concrete, "")
				expect("no token", w, 401, "")
				if got := w.Header().Get("WWW-Authenticate"); got != "Bearer" {
					t.Errorf("no token: challenge %q", got)
				}
				for _, tok := range []string{"pw_unknown", tokBlocked, tokDisabled} {
					w := call(concrete, tok)
					expect("token "+tok, w, 401, "")
					if got := w.Header().Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
						t.Errorf("token %s: challenge %q", tok, got)
					}
				}
				expect("unknown parameter", call(concrete+"?zzz=1", tokOwner), 400, "zzz")

				var params []*openapi3.Parameter
				for _, pr := range op.Parameters {
					params = append(params, pr.Value)
				}
				for _, p := range params {
					switch p.In {
					case "path":
						bad := pathParam.ReplaceAllStringFunc(path, func(m string) string {
							if m == "{"+p.Name+"}" {
								return "not-a-uuid"
							}
							return store.NewID()
						})
						expect("malformed "+p.Name, call(bad, tokOwner), 400, p.Name)
					case "query":
						s := p.Schema.Value
						if s.Type.Is("array") {
							s = s.Items.Value
						}
						bads, good := invalidValues(s)
						for _, v := range bads {
							expect(p.Name+"="+v, call(concrete+"?"+p.Name+"="+v, tokOwner), 400, p.Name)
						}
						if !p.Schema.Value.Type.Is("array") {
							expect(p.Name+" repeated", call(concrete+"?"+p.Name+"="+good+"&"+p.Name+"="+good, tokOwner), 400, p.Name)
						}
					}
				}
				if op.RequestBody != nil {
					w := serve(t, f.h, method, concrete, tokOwner, "text/plain", "hello")
					expect("text body", w, 415, "")
				}
				// A plain call by the owner: lists answer 200, unknown ids
				// 404; other methods (whose handlers may first check a
				// body or their own preconditions) are validated for shape
				// only.
				w = call(concrete, tokOwner)
				switch {
				case method != http.MethodGet:
				case strings.Contains(path, "{"):
					expect("unknown id", w, 404, "")
				default:
					expect("plain call", w, 200, "")
				}
			})
		}
	}
}

func TestUsersRoute(t *testing.T) {
	f := newConformanceFixture(t)
	o1Users := []string{"owner", "alice", "bob", "blocked"}
	page := func(t *testing.T, query, token string) UserList {
		t.Helper()
		w := serve(t, f.h, "GET", "/backend/v1/users"+query, token, "", "")
		if w.Code != 200 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		var l UserList
		if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	emails := func(l UserList) []string {
		var out []string
		for _, u := range l.Users {
			out = append(out, u.Email)
		}
		return out
	}
	adminRole := store.RoleID("o1", store.RoleAdmin)
	tests := []struct {
		name  string
		query string
		token string
		want  []string // e-mails, in order
		roles []string // role ids in the roles map
	}{
		{"search", "?search=ACME.example&limit=100", tokOwner, []string{"erin@acme.example", "dave@acme.example", "carol@acme.example"}, nil},
		{"search name", "?search=dav", tokBob, []string{"dave@acme.example"}, nil},
		{"project", "?project=p1&limit=2", tokOwner, []string{"erin@acme.example", "dave@acme.example"}, nil},
		{"group", "?groupId=g1&roleId=" + adminRole, tokOwner, []string{"dave@acme.example"}, nil},
		{"include roles", "?project=p1&includeRoles=true", tokBoot, []string{"erin@acme.example", "dave@acme.example", "carol@acme.example"},
			[]string{adminRole, store.RoleID("o1", store.RoleMember)}},
		{"no match", "?project=zzz", tokOwner, nil, nil},
		{"other org sees its own", "?limit=100", tokOther, []string{""}, nil},
		{"other org cannot use o1's role id", "?roleId=" + adminRole, tokOther, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := page(t, tt.query, tt.token)
			if got := emails(l); !slices.Equal(got, tt.want) {
				t.Fatalf("users %v, want %v", got, tt.want)
			}
			var roles []string
			for id, r := range l.Roles {
				if r.ID != id || r.Org != "o1" || len(r.Permissions) == 0 {
					t.Fatalf("role %s = %+v", id, r)
				}
				roles = append(roles, id)
			}
			slices.Sort(roles)
			want := slices.Clone(tt.roles)
			slices.Sort(want)
			if !slices.Equal(roles, want) {
				t.Fatalf("roles %v, want %v", roles, want)
			}
		})
	}

	// Paging through everything, forward then back.
	var all []string
	var pages []UserList
	q := "?limit=2"
	for {
		l := page(t, q, tokOwner)
		pages = append(pages, l)
		for _, u := range l.Users {
			all = append(all, u.ID)
		}
		if l.Next == "" {
			break
		}
		q = "?limit=2&cursor=" + l.Next
	}
	if len(all) != len(o1Users)+3 {
		t.Fatalf("paged %d users: %v", len(all), all)
	}
	for i := len(pages) - 1; i > 0; i-- {
		l := page(t, "?limit=2&cursor="+pages[i].Prev, tokOwner)
		if !slices.Equal(emails(l), emails(pages[i-1])) {
			t.Fatalf("prev of page %d", i)
		}
	}
	w := serve(t, f.h, "GET", "/backend/v1/users?limit=2&search=a&cursor="+pages[1].Prev, tokOwner, "", "")
	if w.Code != 400 || errorOf(t, w).Param != "cursor" {
		t.Fatalf("cursor of another query: %d %s", w.Code, w.Body)
	}

	// Field values.
	l := page(t, "?search=dave", tokOwner)
	d := l.Users[0]
	if d.Admin != "true" || d.Org != "o1" || !slices.Equal(d.Roles, []string{"admin"}) ||
		!slices.Equal(d.RoleIDs, []string{adminRole}) || !slices.Equal(d.Teams, []string{"red"}) ||
		!slices.Contains(d.Permissions, store.PermUsersRead) || d.CreatedAt.IsZero() {
		t.Fatalf("dave = %+v", d)
	}
	if e := page(t, "?search=erin", tokOwner).Users[0]; e.Admin != "false" || slices.Contains(e.Permissions, store.PermUsersRead) {
		t.Fatalf("erin = %+v", e)
	}
}

func TestOrgsAndEndpointRoutes(t *testing.T) {
	f := newConformanceFixture(t)
	for _, tok := range []string{tokOwner, tokAlice, tokOther, tokBoot} {
		w := serve(t, f.h, "GET", "/backend/v1/orgs", tok, "", "")
		var l OrgList
		if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || w.Code != 200 || len(l.Orgs) != 1 {
			t.Fatalf("orgs for %s: %d %s", tok, w.Code, w.Body)
		}
		o := l.Orgs[0]
		wantID := "o1"
		if tok == tokOther {
			wantID = "o2"
		}
		if o.ID != wantID || o.OwnerRoleID != store.RoleID(wantID, store.RoleOwner) || o.AdminRoleID != store.RoleID(wantID, store.RoleAdmin) ||
			!o.HasOwner || o.Features != store.DefaultFeatures() {
			t.Fatalf("orgs for %s: %+v", tok, o)
		}
	}

	tests := []struct {
		query  string
		status int
		id     string
	}{
		{"", 200, "global"},
		{"?groupId=p1", 200, "p1"},
		{"?groupId=p1&chatbotId=bot1", 200, "bot1"},
		{"?chatbotId=bot1", 200, "bot1"},
		{"?groupId=nope", 404, ""},
		{"?chatbotId=nope", 404, ""},
		{"?groupId=", 400, ""},
	}
	for _, tt := range tests {
		w := serve(t, f.h, "GET", "/backend/v1/endpoint"+tt.query, tokAlice, "", "")
		if w.Code != tt.status {
			t.Fatalf("endpoint%s: %d %s", tt.query, w.Code, w.Body)
		}
		if w.Header().Get("Deprecation") != "@1767225600" || !strings.Contains(w.Header().Get("Link"), `rel="deprecation"`) {
			t.Fatalf("endpoint%s: deprecation headers %v", tt.query, w.Header())
		}
		if tt.status == 200 {
			var r EndpointResponse
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || r.Endpoint.Name != tt.id {
				t.Fatalf("endpoint%s: %s", tt.query, w.Body)
			}
		}
	}
	// Without a resolver the route does not exist.
	h, err := New(Config{Store: f.s})
	if err != nil {
		t.Fatal(err)
	}
	if w := serve(t, h, "GET", "/backend/v1/endpoint", tokOwner, "", ""); w.Code != 404 {
		t.Fatalf("endpoint without resolver: %d", w.Code)
	}
}

// TestAuthorizationMatrix: every route against every kind of caller, and
// org A's objects addressed with org B's token.
func TestAuthorizationMatrix(t *testing.T) {
	f := newConformanceFixture(t)
	bobPrompt, otherPrompt := f.bob[0].ID, f.other[0].ID
	callers := []string{"owner", "admin", "member", "other org", "blocked", "disabled org", "bootstrap", "none"}
	tokens := map[string]string{"owner": tokOwner, "admin": tokBob, "member": tokAlice, "other org": tokOther,
		"blocked": tokBlocked, "disabled org": tokDisabled, "bootstrap": tokBoot, "none": ""}
	tests := []struct {
		target string
		want   []int // per caller, in the order of callers
	}{
		{"/backend/v1/scans", []int{200, 200, 200, 200, 401, 401, 200, 401}},
		{"/backend/v1/scans?onlyUser=false", []int{200, 200, 403, 200, 401, 401, 200, 401}},
		{"/backend/v1/prompts/" + bobPrompt, []int{200, 200, 404, 404, 401, 401, 200, 401}},
		{"/backend/v1/prompts/" + otherPrompt, []int{404, 404, 404, 200, 401, 401, 404, 401}},
		{"/backend/v1/users", []int{200, 200, 403, 200, 401, 401, 200, 401}},
		{"/backend/v1/orgs", []int{200, 200, 200, 200, 401, 401, 200, 401}},
		{"/backend/v1/endpoint", []int{200, 200, 200, 200, 401, 401, 200, 401}},
		{"/backend/v1/openapi.json", []int{200, 200, 200, 200, 401, 401, 200, 401}},
	}
	for _, tt := range tests {
		for i, who := range callers {
			w := serve(t, f.h, "GET", tt.target, tokens[who], "", "")
			if w.Code != tt.want[i] {
				t.Errorf("%s as %s: %d, want %d: %s", tt.target, who, w.Code, tt.want[i], w.Body)
			}
		}
	}

	// Nothing of org o1 leaks to o2's owner through any list.
	o1IDs := append(storetest.IDs(f.alice), storetest.IDs(f.bob)...)
	// User ids "owner" and "blocked" are also role names and field names,
	// so o1's users are recognised by their other ids and e-mails.
	o1IDs = append(o1IDs, "alice", "bob", "o1", "carol@acme.example", store.RoleID("o1", store.RoleOwner), store.RoleID("o1", store.RoleMember))
	for _, target := range []string{"/backend/v1/scans?onlyUser=false&limit=100", "/backend/v1/users?limit=100&includeRoles=true",
		"/backend/v1/orgs", "/backend/v1/users?roleId=" + store.RoleID("o1", store.RoleOwner)} {
		body := serve(t, f.h, "GET", target, tokOther, "", "").Body.String()
		for _, id := range o1IDs {
			if strings.Contains(body, `"`+id+`"`) {
				t.Errorf("%s as other org shows %s: %s", target, id, body)
			}
		}
	}
}

// TestDocumentedRoutes: the routes this package serves are in the document,
// so the shared checks apply to them.
func TestDocumentedRoutes(t *testing.T) {
	spec, err := compiledSpec()
	if err != nil {
		t.Fatal(err)
	}
	for _, pattern := range []string{"GET /backend/v1/scans", "GET /backend/v1/prompts/{promptId}", "GET /backend/v1/users",
		"GET /backend/v1/orgs", "GET /backend/v1/endpoint", "GET /backend/v1/openapi.json"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Pattern = pattern
		if op, _ := spec.operation(r); op == nil {
			t.Errorf("%s is not in openapi.json", pattern)
		}
	}
}
