package api

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/store"
	"github.com/promptwall/promptwall/store/storetest"
)

const (
	tokOwner   = "pw_owner_0123456789abcdef0123456789abcdef"
	tokAlice   = "pw_alice_0123456789abcdef0123456789abcdef"
	tokBob     = "pw_bob_0123456789abcdef0123456789abcdef"
	tokBlocked = "pw_blocked_0123456789abcdef0123456789abcd"
	tokOther   = "pw_other_0123456789abcdef0123456789abcdef"
	tokBoot    = "pw_bootstrap_0123456789abcdef0123456789ab"
)

type fixture struct {
	h     *Handler
	s     *store.Store
	alice []*store.Prompt // o1, user alice, commit order
	bob   []*store.Prompt // o1, user bob
	other []*store.Prompt // o2
	chain []*store.Prompt // o1: alice, bob, alice
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureWith(t, store.Options{})
}

// newFixtureWith is newFixture on a store opened with opts (its path set
// here).
func newFixtureWith(t *testing.T, opts store.Options) *fixture {
	t.Helper()
	opts.Path = filepath.Join(t.TempDir(), "pw.db")
	s, err := store.Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.PutOrg(&store.Org{ID: "o1", Name: "Acme"}))
	must(s.PutOrg(&store.Org{ID: "o2", Name: "Other"}))
	users := []struct {
		u   store.User
		tok string
	}{
		{store.User{ID: "owner", OrgID: "o1", Role: store.RoleOwner}, tokOwner},
		{store.User{ID: "alice", OrgID: "o1", Role: store.RoleMember}, tokAlice},
		{store.User{ID: "bob", OrgID: "o1", Role: store.RoleAdmin}, tokBob},
		{store.User{ID: "blocked", OrgID: "o1", Role: store.RoleOwner, Blocked: true}, tokBlocked},
		{store.User{ID: "eve", OrgID: "o2", Role: store.RoleOwner}, tokOther},
	}
	for _, u := range users {
		must(s.PutUser(&u.u))
		must(s.PutToken(&store.Token{Hash: sha256.Sum256([]byte(u.tok)), UserID: u.u.ID, OrgID: u.u.OrgID}))
	}
	f := &fixture{s: s}
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	outcomes := []string{"passed", "blocked", "flagged"}
	for i := range 25 {
		p := &store.Prompt{
			PromptFields: store.PromptFields{OrgID: "o1", UserID: "alice", Input: fmt.Sprintf("alice question %d", i), Type: store.TypeScan,
				ProjectID:  []string{"p1", "p2"}[i%2],
				ReceivedAt: store.Timestamp(base.Add(time.Duration(i) * time.Minute)),
				Result:     store.PromptResult{Outcome: outcomes[i%3]}},
			EndpointID: "e1", ProviderID: "openai",
		}
		must(s.Put(context.Background(), p))
		f.alice = append(f.alice, p)
	}
	for i := range 5 {
		p := &store.Prompt{
			PromptFields: store.PromptFields{OrgID: "o1", UserID: "bob", Input: fmt.Sprint("bob ", i), Type: store.TypePrompt,
				Result: store.PromptResult{Outcome: "passed"}},
		}
		must(s.Put(context.Background(), p))
		f.bob = append(f.bob, p)
	}
	for range 3 {
		p := &store.Prompt{
			PromptFields: store.PromptFields{OrgID: "o2", UserID: "eve", Input: "eve", Type: store.TypeScan,
				Result: store.PromptResult{Outcome: "passed"}},
		}
		must(s.Put(context.Background(), p))
		f.other = append(f.other, p)
	}
	// Every record is complete (type, outcome) so that responses validate
	// against the OpenAPI document.
	root := &store.Prompt{
		PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o1", UserID: "alice", Input: "first turn", Type: store.TypePrompt,
			Result: store.PromptResult{Outcome: "passed"}},
	}
	mid := &store.Prompt{
		PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o1", UserID: "bob", Input: "second turn", ParentID: root.ID,
			Memory: root.ID, Type: store.TypePrompt, Result: store.PromptResult{Outcome: "passed"}},
	}
	leaf := &store.Prompt{
		PromptFields: store.PromptFields{ID: store.NewID(), OrgID: "o1", UserID: "alice", Input: "third turn", ParentID: mid.ID,
			Type: store.TypePrompt,
			Result: store.PromptResult{Outcome: "blocked", ScannerResults: []store.ScannerResult{{
				ScannerID: "pii", Outcome: "blocked", ScanDirection: "input",
				Data: store.ScannerData{Type: "pii", Matches: [][2]int{{0, 5}}},
			}}}},
		Scanners: `[{"id":"pii","mode":"block"}]`,
	}
	f.chain = []*store.Prompt{root, mid, leaf}
	for _, p := range f.chain {
		must(s.Put(context.Background(), p))
	}
	must(s.Sync(context.Background()))
	boot := sha256.Sum256([]byte(tokBoot))
	f.h, err = New(Config{Store: s, BootstrapTokenHash: &boot, BootstrapOrgID: "o1"})
	must(err)
	return f
}

func (f *fixture) do(t *testing.T, method, target, token string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	validateResponse(t, r, w)
	if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("%s %s: Content-Type %q", method, target, ct)
	}
	if !json.Valid(w.Body.Bytes()) {
		t.Fatalf("%s %s: body is not JSON: %q", method, target, w.Body.String())
	}
	return w
}

type errResp struct {
	Error struct {
		Code    string  `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
	} `json:"error"`
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	leafID := f.chain[2].ID
	tests := []struct {
		name      string
		method    string
		target    string
		token     string
		header    string // raw Authorization header, overrides token
		status    int
		code      string
		param     string
		challenge string
		allow     string
	}{
		{name: "no token", target: "/backend/v1/scans", status: 401, code: "unauthorized", challenge: "Bearer"},
		{name: "basic auth", target: "/backend/v1/scans", header: "Basic dXNlcjpwYXNz", status: 401, code: "unauthorized", challenge: "Bearer"},
		{name: "wrong token", target: "/backend/v1/scans", token: "pw_nope", status: 401, code: "unauthorized", challenge: `Bearer error="invalid_token"`},
		{name: "empty bearer", target: "/backend/v1/scans", header: "Bearer ", status: 401, code: "unauthorized", challenge: `Bearer error="invalid_token"`},
		{name: "blocked user", target: "/backend/v1/scans", token: tokBlocked, status: 401, code: "unauthorized", challenge: `Bearer error="invalid_token"`},
		{name: "no token unknown path", target: "/backend/v1/nope", status: 401, code: "unauthorized", challenge: "Bearer"},
		{name: "limit 0", target: "/backend/v1/scans?limit=0", token: tokAlice, status: 400, code: "invalid_parameter", param: "limit"},
		{name: "limit 101", target: "/backend/v1/scans?limit=101", token: tokAlice, status: 400, code: "invalid_parameter", param: "limit"},
		{name: "limit abc", target: "/backend/v1/scans?limit=abc", token: tokAlice, status: 400, code: "invalid_parameter", param: "limit"},
		{name: "limit empty", target: "/backend/v1/scans?limit=", token: tokAlice, status: 400, code: "invalid_parameter", param: "limit"},
		{name: "limit repeated", target: "/backend/v1/scans?limit=5&limit=6", token: tokAlice, status: 400, code: "invalid_parameter", param: "limit"},
		{name: "bad before", target: "/backend/v1/scans?before=yesterday", token: tokAlice, status: 400, code: "invalid_parameter", param: "before"},
		{name: "bad after", target: "/backend/v1/scans?after=2026-01-01", token: tokAlice, status: 400, code: "invalid_parameter", param: "after"},
		{name: "bad ascending", target: "/backend/v1/scans?ascending=1", token: tokAlice, status: 400, code: "invalid_parameter", param: "ascending"},
		{name: "bad onlyUser", target: "/backend/v1/scans?onlyUser=TRUE", token: tokAlice, status: 400, code: "invalid_parameter", param: "onlyUser"},
		{name: "bad outcome", target: "/backend/v1/scans?outcomes=passed&outcomes=skipped", token: tokAlice, status: 400, code: "invalid_parameter", param: "outcomes"},
		{name: "empty projectId", target: "/backend/v1/scans?projectId=", token: tokAlice, status: 400, code: "invalid_parameter", param: "projectId"},
		{name: "tampered cursor", target: "/backend/v1/scans?cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", token: tokAlice, status: 400, code: "invalid_parameter", param: "cursor"},
		{name: "unknown param", target: "/backend/v1/scans?onlyuser=false", token: tokAlice, status: 400, code: "invalid_parameter", param: "onlyuser"},
		{name: "malformed query", target: "/backend/v1/scans?limit=%zz", token: tokAlice, status: 400, code: "invalid_parameter"},
		{name: "member onlyUser false", target: "/backend/v1/scans?onlyUser=false", token: tokAlice, status: 403, code: "forbidden", param: "onlyUser"},
		{name: "malformed uuid", target: "/backend/v1/prompts/not-a-uuid", token: tokAlice, status: 400, code: "invalid_parameter", param: "promptId"},
		{name: "braced uuid", target: "/backend/v1/prompts/%7B" + leafID + "%7D", token: tokOwner, status: 400, code: "invalid_parameter", param: "promptId"},
		{name: "unknown prompt", target: "/backend/v1/prompts/" + store.NewID(), token: tokOwner, status: 404, code: "not_found"},
		{name: "other org prompt", target: "/backend/v1/prompts/" + f.other[0].ID, token: tokOwner, status: 404, code: "not_found"},
		{name: "member reads other user's prompt", target: "/backend/v1/prompts/" + f.bob[0].ID, token: tokAlice, status: 404, code: "not_found"},
		{name: "bad fetchScanners", target: "/backend/v1/prompts/" + leafID + "?fetchScanners=yes", token: tokOwner, status: 400, code: "invalid_parameter", param: "fetchScanners"},
		{name: "unknown prompt param", target: "/backend/v1/prompts/" + leafID + "?limit=1", token: tokOwner, status: 400, code: "invalid_parameter", param: "limit"},
		{name: "unknown path", target: "/backend/v1/nope", token: tokAlice, status: 404, code: "not_found"},
		{name: "unclean path", target: "/backend/v1//scans", token: tokAlice, status: 404, code: "not_found"},
		{name: "post scans", method: "POST", target: "/backend/v1/scans", token: tokAlice, status: 405, code: "method_not_allowed", allow: "GET, HEAD"},
		{name: "delete prompt", method: "DELETE", target: "/backend/v1/prompts/" + leafID, token: tokAlice, status: 405, code: "method_not_allowed", allow: "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = "GET"
			}
			r := httptest.NewRequest(method, tt.target, nil)
			switch {
			case tt.header != "":
				r.Header.Set("Authorization", tt.header)
			case tt.token != "":
				r.Header.Set("Authorization", "Bearer "+tt.token)
			}
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			validateResponse(t, r, w)
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d; body %s", w.Code, tt.status, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Fatalf("Content-Type %q", ct)
			}
			var e errResp
			dec := json.NewDecoder(w.Body)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("error body not in the documented shape: %v", err)
			}
			if e.Error.Code != tt.code || e.Error.Message == "" {
				t.Fatalf("error = %+v, want code %s", e.Error, tt.code)
			}
			if tt.param == "" && e.Error.Param != nil {
				t.Fatalf("param %q present, want omitted", *e.Error.Param)
			}
			if tt.param != "" && (e.Error.Param == nil || *e.Error.Param != tt.param) {
				t.Fatalf("param = %v, want %s", e.Error.Param, tt.param)
			}
			if got := w.Header().Get("WWW-Authenticate"); got != tt.challenge {
				t.Fatalf("WWW-Authenticate = %q, want %q", got, tt.challenge)
			}
			if got := w.Header().Get("Allow"); got != tt.allow {
				t.Fatalf("Allow = %q, want %q", got, tt.allow)
			}
			if strings.Contains(w.Body.String(), "goroutine") {
				t.Fatalf("stack trace in body")
			}
		})
	}
}

func decodeScans(t *testing.T, w *httptest.ResponseRecorder) ScanList {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var l ScanList
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func scanIDs(l ScanList) []string {
	out := make([]string, len(l.Scans))
	for i, s := range l.Scans {
		out[i] = s.ID
	}
	return out
}

func TestListScans(t *testing.T) {
	f := newFixture(t)
	aliceAll := append(storetest.IDs(f.alice), f.chain[0].ID, f.chain[2].ID)
	orgAll := slices.Concat(storetest.IDs(f.alice), storetest.IDs(f.bob), storetest.IDs(f.chain))
	rev := func(v []string) []string { v = slices.Clone(v); slices.Reverse(v); return v }
	pick := func(ps []*store.Prompt, keep func(*store.Prompt) bool) []string {
		var out []string
		for _, p := range ps {
			if keep(p) {
				out = append(out, p.ID)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		query string
		token string
		limit int
		want  []string // every page concatenated, in order
	}{
		{"default is own, newest first, 10", "", tokAlice, 10, rev(aliceAll)},
		{"ascending", "ascending=true&limit=4", tokAlice, 4, aliceAll},
		{"admin whole org", "onlyUser=false&limit=100", tokBob, 100, rev(orgAll)},
		{"owner whole org small pages", "onlyUser=false&limit=3&ascending=true", tokOwner, 3, orgAll},
		{"admin own only by default", "limit=100", tokBob, 100, rev(append(storetest.IDs(f.bob), f.chain[1].ID))},
		{"outcomes", "outcomes=blocked&outcomes=flagged&limit=5", tokAlice, 5,
			rev(append(pick(f.alice, func(p *store.Prompt) bool { return p.Result.Outcome != "passed" }), f.chain[2].ID))},
		{"projectId", "projectId=p2&limit=5", tokAlice, 5, rev(pick(f.alice, func(p *store.Prompt) bool { return p.ProjectID == "p2" }))},
		{"endpoint and provider", "endpointId=e1&providerId=openai&limit=50", tokAlice, 50, rev(storetest.IDs(f.alice))},
		{"search", "search=QUESTION%202&limit=50", tokAlice, 50,
			rev(pick(f.alice, func(p *store.Prompt) bool { return strings.Contains(p.Input, "question 2") }))},
		{"after and before", "after=2026-05-01T12:03:00Z&before=2026-05-01T12:07:00.000Z&limit=2", tokAlice, 2,
			rev(storetest.IDs(f.alice[4:7]))},
		{"bootstrap sees org", "onlyUser=false&limit=100", tokBoot, 100, rev(orgAll)},
		{"other org sees only its own", "onlyUser=false&limit=100", tokOther, 100, rev(storetest.IDs(f.other))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			var pages []ScanList
			target := "/backend/v1/scans?" + tt.query
			for i := 0; ; i++ {
				if i > 100 {
					t.Fatal("paging does not end")
				}
				l := decodeScans(t, f.do(t, "GET", target, tt.token))
				if i == 0 && l.Prev != "" {
					t.Fatalf("first page has prev")
				}
				if l.Next != "" && len(l.Scans) != tt.limit {
					t.Fatalf("page %d has %d scans, want %d", i, len(l.Scans), tt.limit)
				}
				pages = append(pages, l)
				got = append(got, scanIDs(l)...)
				if l.Next == "" {
					break
				}
				target = "/backend/v1/scans?" + tt.query + "&cursor=" + l.Next
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v\nwant %v", got, tt.want)
			}
			// Back with prev: the same pages in reverse.
			for i := len(pages) - 1; i > 0; i-- {
				l := decodeScans(t, f.do(t, "GET", "/backend/v1/scans?"+tt.query+"&cursor="+pages[i].Prev, tt.token))
				if !slices.Equal(scanIDs(l), scanIDs(pages[i-1])) {
					t.Fatalf("prev of page %d = %v, want %v", i, scanIDs(l), scanIDs(pages[i-1]))
				}
			}
		})
	}
}

// TestWireShape checks every spec field is present with its JSON type, and
// nothing else at the top level.
func TestWireShape(t *testing.T) {
	f := newFixture(t)
	kinds := func(m map[string]any) map[string]string {
		out := make(map[string]string, len(m))
		for k, v := range m {
			out[k] = fmt.Sprintf("%T", v)
		}
		return out
	}
	scannerResult := map[string]string{"completedDate": "string", "customConfig": "bool", "data": "map[string]interface {}",
		"outcome": "string", "scanDirection": "string", "scannerId": "string", "scannerVersionMeta": "string", "startedDate": "string"}

	var list map[string]any
	w := f.do(t, "GET", "/backend/v1/scans?limit=1", tokAlice)
	if err := json.Unmarshal(w.Body.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(list), map[string]string{"next": "string", "prev": "string", "scans": "[]interface {}"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("list fields %v, want %v", got, want)
	}
	scan := list["scans"].([]any)[0].(map[string]any)
	wantScan := map[string]string{"id": "string", "externalMetadata": "string", "input": "string", "preserve": "bool",
		"projectId": "string", "receivedAt": "string", "result": "map[string]interface {}", "type": "string", "userId": "string"}
	if got := kinds(scan); !reflect.DeepEqual(got, wantScan) {
		t.Fatalf("scan fields %v, want %v", got, wantScan)
	}
	res := scan["result"].(map[string]any)
	if got, want := kinds(res), map[string]string{"outcome": "string", "scannerResults": "[]interface {}"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("scan result fields %v, want %v", got, want)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", scan["receivedAt"].(string)); err != nil {
		t.Fatalf("receivedAt %q not RFC 3339 UTC millis", scan["receivedAt"])
	}

	var one map[string]any
	w = f.do(t, "GET", "/backend/v1/prompts/"+f.chain[2].ID+"?fetchScanners=true", tokOwner)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &one); err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(one), map[string]string{"memory": "[]interface {}", "prompt": "string", "promptScanners": "string"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("prompt response fields %v, want %v", got, want)
	}
	wantPrompt := map[string]string{"id": "string", "externalMetadata": "string", "fromTemplate": "bool", "input": "string",
		"memory": "string", "orgId": "string", "parentId": "string", "preserve": "bool", "projectId": "string",
		"provider": "string", "receivedAt": "string", "result": "map[string]interface {}", "type": "string", "userId": "string"}
	wantResult := map[string]string{"analysis": "string", "files": "string", "outcome": "string", "providerResult": "string",
		"response": "string", "scannerResults": "[]interface {}"}
	for _, m := range one["memory"].([]any) {
		item := m.(map[string]any)
		if got := kinds(item); !reflect.DeepEqual(got, wantPrompt) {
			t.Fatalf("memory item fields %v, want %v", got, wantPrompt)
		}
		r := item["result"].(map[string]any)
		if got := kinds(r); !reflect.DeepEqual(got, wantResult) {
			t.Fatalf("result fields %v, want %v", got, wantResult)
		}
		for _, sr := range r["scannerResults"].([]any) {
			got := kinds(sr.(map[string]any))
			if !reflect.DeepEqual(got, scannerResult) {
				t.Fatalf("scanner result fields %v, want %v", got, scannerResult)
			}
			data := sr.(map[string]any)["data"].(map[string]any)
			if _, ok := data["matches"].([]any); !ok {
				t.Fatalf("data.matches = %v", data["matches"])
			}
		}
	}
}

func TestGetPrompt(t *testing.T) {
	f := newFixture(t)
	root, mid, leaf := f.chain[0], f.chain[1], f.chain[2]
	tests := []struct {
		name     string
		id       string
		query    string
		token    string
		memory   []string
		scanners string
	}{
		{"owner sees whole chain", leaf.ID, "", tokOwner, []string{root.ID, mid.ID, leaf.ID}, ""},
		{"fetchScanners", leaf.ID, "?fetchScanners=true", tokOwner, []string{root.ID, mid.ID, leaf.ID}, leaf.Scanners},
		{"fetchScanners false", leaf.ID, "?fetchScanners=false", tokBob, []string{root.ID, mid.ID, leaf.ID}, ""},
		{"member sees own turns only", leaf.ID, "", tokAlice, []string{root.ID, leaf.ID}, ""},
		{"root alone", root.ID, "", tokAlice, []string{root.ID}, ""},
		{"upper-case id", strings.ToUpper(leaf.ID), "", tokOwner, []string{root.ID, mid.ID, leaf.ID}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := f.do(t, "GET", "/backend/v1/prompts/"+tt.id+tt.query, tt.token)
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			var resp PromptResponse
			if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range resp.Memory {
				got = append(got, m.ID)
				if m.Memory != root.ID {
					t.Fatalf("memory of %s = %q, want root id", m.ID, m.Memory)
				}
			}
			if !slices.Equal(got, tt.memory) {
				t.Fatalf("memory = %v, want %v", got, tt.memory)
			}
			if resp.Prompt != strings.ToLower(tt.id) || resp.PromptScanners != tt.scanners {
				t.Fatalf("prompt %q scanners %q", resp.Prompt, resp.PromptScanners)
			}
		})
	}
}

func TestPanicIsJSON500(t *testing.T) {
	f := newFixture(t)
	f.h.mux.HandleFunc("GET /backend/v1/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	w := f.do(t, "GET", "/backend/v1/boom", tokAlice)
	if w.Code != 500 || strings.Contains(w.Body.String(), "boom") {
		t.Fatalf("panic answered %d %s", w.Code, w.Body)
	}
	var e errResp
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code != "internal_error" {
		t.Fatalf("body %s", w.Body)
	}
}

func TestNew(t *testing.T) {
	s, err := store.Open(store.Options{Path: filepath.Join(t.TempDir(), "pw.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := [32]byte{1}
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"ok", Config{Store: s}, false},
		{"no store", Config{}, true},
		{"bootstrap without org", Config{Store: s, BootstrapTokenHash: &h}, true},
		{"bootstrap", Config{Store: s, BootstrapTokenHash: &h, BootstrapOrgID: "o"}, false},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); (err != nil) != tt.wantErr {
			t.Errorf("%s: New error = %v, wantErr %v", tt.name, err, tt.wantErr)
		}
	}
	// The documented single/multi parameter sets must not overlap.
	all := append(slices.Clone(scansSingle), scansMulti...)
	sort.Strings(all)
	if len(slices.Compact(all)) != len(scansSingle)+len(scansMulti) {
		t.Fatal("scans parameter sets overlap")
	}
}
