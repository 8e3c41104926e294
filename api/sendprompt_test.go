package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptwall/promptwall/limits"
	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

const upstreamKey = "sk-upstream-SECRET-abcdef0123456789"

type fakeProviders map[string]*provider.Config

func (f fakeProviders) Provider(_ string, idOrName string) (*provider.Config, bool) {
	for _, c := range f {
		if c.Name == idOrName || c.ID == idOrName {
			cp := *c
			return &cp, true
		}
	}
	return nil, false
}

type fakeScreener struct{}

// ScreenEndpoint serves one endpoint whose input screening blocks any
// text containing BLOCKME.
func (fakeScreener) ScreenEndpoint(name string) (ScreenEndpoint, bool) {
	if name != "" && name != "default" && name != "ep-1" {
		return ScreenEndpoint{}, false
	}
	return ScreenEndpoint{
		ID: "ep-1", Name: "default", Providers: []string{"openai", "custom"},
		Scanners: `[{"id":"blockme","mode":"block"}]`,
		Screen: func(_ context.Context, conv *scanner.Conversation, dir scanner.Direction) *scanner.Result {
			res := &scanner.Result{Outcome: scanner.Passed, Scanners: []scanner.ScannerResult{{ScannerID: "blockme", Type: "regex", Direction: dir, Outcome: scanner.Passed}}}
			for _, m := range conv.Messages {
				if strings.Contains(m.Text, "BLOCKME") {
					res.Outcome, res.FlagMessage = scanner.Blocked, "not allowed"
					res.Scanners[0].Outcome = scanner.Blocked
				}
			}
			return res
		},
	}, true
}

// recordingUpstream answers like a provider of typ and keeps every body.
type recordingUpstream struct {
	mu     sync.Mutex
	bodies []map[string]any
	delay  time.Duration
	srv    *httptest.Server
}

func newUpstream(t *testing.T, answer string) *recordingUpstream {
	u := &recordingUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		u.mu.Lock()
		u.bodies = append(u.bodies, m)
		d := u.delay
		u.mu.Unlock()
		if d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *recordingUpstream) last() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.bodies[len(u.bodies)-1]
}

type sendFixture struct {
	*fixture
	api       *Handler
	providers fakeProviders
	ups       map[string]*recordingUpstream
	responses [][]byte
}

func newSendFixture(t *testing.T, lim limits.Set) *sendFixture {
	return newSendFixtureWith(t, lim, store.Options{})
}

func newSendFixtureWith(t *testing.T, lim limits.Set, opts store.Options) *sendFixture {
	f := &sendFixture{fixture: newFixtureWith(t, opts), providers: fakeProviders{}, ups: map[string]*recordingUpstream{}}
	answers := map[string]string{
		provider.TypeOpenAI:      `{"choices":[{"message":{"role":"assistant","content":"openai says hi"}}]}`,
		provider.TypeAzureOpenAI: `{"choices":[{"message":{"role":"assistant","content":"azure says hi"}}]}`,
		provider.TypeAnthropic:   `{"content":[{"type":"text","text":"claude says hi"}]}`,
		provider.TypeGemini:      `{"candidates":[{"content":{"role":"model","parts":[{"text":"gemini says hi"}]}}]}`,
		provider.TypeOllama:      `{"message":{"role":"assistant","content":"ollama says hi"},"done":true}`,
		provider.TypeCustom:      `{"out":{"text":"custom says hi"}}`,
	}
	for typ, answer := range answers {
		u := newUpstream(t, answer)
		f.ups[typ] = u
		c := &provider.Config{Name: typ, Type: typ, Model: "m", BaseURL: u.srv.URL, Secrets: map[string]string{provider.SecretAPIKey: upstreamKey},
			Availability: provider.Availability{Global: true}}
		if typ == provider.TypeCustom {
			c.Secrets = map[string]string{"token": upstreamKey}
			c.Template = provider.Template{URL: u.srv.URL + "/gen", Headers: map[string]string{"Authorization": "Bearer {{secrets.token}}"},
				JSON: `{"history": {{messages}}, "q": "{{input}}"}`, Outputs: map[string]string{"response": "out.text"}}
		}
		c.Provision()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		f.providers[typ] = c
	}
	var err error
	f.api, err = New(Config{Store: f.s, Providers: f.providers, Screener: fakeScreener{}, Limits: lim, LimitWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *sendFixture) call(t *testing.T, method, target, token, contentType, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	f.api.ServeHTTP(w, r)
	f.responses = append(f.responses, w.Body.Bytes())
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: body is not JSON: %s", method, target, w.Body)
	}
	return w, m
}

func (f *sendFixture) send(t *testing.T, token string, body map[string]any) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	return f.call(t, "POST", "/backend/v1/prompts", token, "application/json", string(b))
}

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, _ := v.(map[string]any)
		v = mm[p]
	}
	return v
}

func TestSendPromptPerProvider(t *testing.T) {
	f := newSendFixture(t, nil)
	for typ := range f.ups {
		t.Run(typ, func(t *testing.T) {
			w, m := f.send(t, tokAlice, map[string]any{"input": "hello " + typ, "provider": typ})
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			want := map[string]string{"openai": "openai", "azure_openai": "azure", "anthropic": "claude", "gemini": "gemini", "ollama": "ollama", "custom": "custom"}[typ] + " says hi"
			if got := field(m, "result", "response"); got != want {
				t.Fatalf("response %v", got)
			}
			if field(m, "result", "outcome") != "passed" || field(m, "scanners") != `[{"id":"blockme","mode":"block"}]` {
				t.Fatalf("result %v", m)
			}
			for _, k := range []string{"analysis", "files", "outcome", "providerResult", "response", "scannerResults"} {
				if _, ok := field(m, "result").(map[string]any)[k]; !ok {
					t.Errorf("result lacks %s", k)
				}
			}
			if !strings.Contains(mustJSON(f.ups[typ].last()), "hello "+typ) {
				t.Fatalf("upstream did not get the input: %v", f.ups[typ].last())
			}
		})
	}
	f.checkNoSecrets(t)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// checkNoSecrets greps every response and the database file for the
// upstream key.
func (f *sendFixture) checkNoSecrets(t *testing.T) {
	t.Helper()
	for _, r := range f.responses {
		if bytes.Contains(r, []byte(upstreamKey)) {
			t.Fatalf("a response contains the provider secret: %s", r)
		}
	}
	if err := f.s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(f.s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(db, []byte(upstreamKey)) {
		t.Fatal("the database file contains the provider secret")
	}
}

func TestSendPromptConversation(t *testing.T) {
	f := newSendFixture(t, nil)
	up := f.ups[provider.TypeCustom]
	parent := ""
	var ids []string
	for i, in := range []string{"turn one", "turn two", "turn three"} {
		body := map[string]any{"input": in, "provider": "custom", "chatName": "c"}
		if parent != "" {
			body = map[string]any{"input": in, "provider": "custom", "parentId": parent}
		}
		w, m := f.send(t, tokAlice, body)
		if w.Code != 200 {
			t.Fatalf("turn %d: %d %s", i, w.Code, w.Body)
		}
		parent = m["id"].(string)
		ids = append(ids, parent)
		if err := f.s.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	history := up.last()["history"].([]any)
	want := []string{"user:turn one", "assistant:custom says hi", "user:turn two", "assistant:custom says hi", "user:turn three"}
	if len(history) != len(want) {
		t.Fatalf("upstream saw %d messages, want %d: %v", len(history), len(want), history)
	}
	for i, h := range history {
		hm := h.(map[string]any)
		if got := hm["role"].(string) + ":" + hm["content"].(string); got != want[i] {
			t.Errorf("message %d = %q, want %q", i, got, want[i])
		}
	}
	if up.last()["q"] != "turn three" {
		t.Errorf("{{input}} = %v", up.last()["q"])
	}
	w, m := f.call(t, "GET", "/backend/v1/prompts/"+ids[2], tokAlice, "", "")
	if w.Code != 200 {
		t.Fatalf("GET prompt: %d %s", w.Code, w.Body)
	}
	memory := m["memory"].([]any)
	if len(memory) != 3 {
		t.Fatalf("memory has %d prompts, want 3", len(memory))
	}
	for i, it := range memory {
		im := it.(map[string]any)
		if im["id"] != ids[i] || im["memory"] != ids[0] {
			t.Errorf("memory[%d] = id %v memory %v", i, im["id"], im["memory"])
		}
	}
	// Another org's user cannot continue it.
	if w, _ := f.send(t, tokOther, map[string]any{"input": "x", "provider": "custom", "parentId": ids[2]}); w.Code != 404 {
		t.Fatalf("other org continuing: %d", w.Code)
	}
	f.checkNoSecrets(t)
}

func TestSendPromptFailures(t *testing.T) {
	f := newSendFixture(t, nil)
	f.ups[provider.TypeOpenAI].delay = 2 * time.Second
	f.providers[provider.TypeOpenAI].Template.Timeout = 50
	w, m := f.send(t, tokAlice, map[string]any{"input": "slow", "provider": "openai"})
	if w.Code != 504 || field(m, "error", "code") != "provider_timeout" {
		t.Fatalf("timeout: %d %s", w.Code, w.Body)
	}
	id, _ := field(m, "error", "promptId").(string)
	if id == "" {
		t.Fatalf("error body lacks promptId: %s", w.Body)
	}
	_ = f.s.Sync(context.Background())
	rec, err := f.s.GetPrompt(id)
	if err != nil || rec.Result.Outcome != "error" || !strings.Contains(rec.Result.ProviderResult, "no answer within") {
		t.Fatalf("record after timeout: %+v %v", rec, err)
	}

	w, m = f.send(t, tokAlice, map[string]any{"input": "please BLOCKME", "provider": "anthropic"})
	if w.Code != 200 || field(m, "result", "outcome") != "blocked" || field(m, "result", "analysis") != "not allowed" || field(m, "result", "response") != "" {
		t.Fatalf("blocked: %d %s", w.Code, w.Body)
	}
	if n := len(f.ups[provider.TypeAnthropic].bodies); n != 0 {
		t.Fatalf("a blocked prompt reached the provider (%d calls)", n)
	}

	tests := []struct {
		name, ct, body string
		status         int
		param          string
	}{
		{"not JSON content type", "text/plain", `{}`, 415, ""},
		{"too large", "application/json", `{"input":"` + strings.Repeat("a", maxJSONBody) + `","provider":"openai"}`, 413, ""},
		{"unknown field", "application/json", `{"input":"x","provider":"openai","bogus":1}`, 400, "bogus"},
		{"wrong type", "application/json", `{"input":5,"provider":"openai"}`, 400, "input"},
		{"missing input", "application/json", `{"provider":"openai"}`, 400, "input"},
		{"missing provider", "application/json", `{"input":"x"}`, 400, "provider"},
		{"unknown provider", "application/json", `{"input":"x","provider":"nope"}`, 400, "provider"},
		{"unknown endpoint", "application/json", `{"input":"x","provider":"openai","endpointId":"nope"}`, 400, "endpointId"},
		{"malformed parentId", "application/json", `{"input":"x","provider":"openai","parentId":"nope"}`, 400, "parentId"},
		{"unknown parentId", "application/json", `{"input":"x","provider":"openai","parentId":"` + store.NewID() + `"}`, 404, "parentId"},
		{"unknown chatId", "application/json", `{"input":"x","provider":"openai","chatId":"` + store.NewID() + `"}`, 404, ""},
		{"trailing data", "application/json", `{"input":"x","provider":"openai"} {}`, 400, ""},
	}
	for _, tt := range tests {
		w, m := f.call(t, "POST", "/backend/v1/prompts", tokAlice, tt.ct, tt.body)
		if w.Code != tt.status || (tt.param != "" && field(m, "error", "param") != tt.param) {
			t.Errorf("%s: %d %s, want %d param %q", tt.name, w.Code, w.Body, tt.status, tt.param)
		}
	}
	f.checkNoSecrets(t)
}

func TestSendPromptRateLimited(t *testing.T) {
	f := newSendFixture(t, limits.Local(limits.NewRegistry(nil, nil)))
	f.providers[provider.TypeOllama].MaxRequestsPerSecond = "0.001"
	if w, _ := f.send(t, tokAlice, map[string]any{"input": "one", "provider": "ollama"}); w.Code != 200 {
		t.Fatalf("first: %d", w.Code)
	}
	w, m := f.send(t, tokAlice, map[string]any{"input": "two", "provider": "ollama"})
	if w.Code != 429 || w.Header().Get("Retry-After") == "" || field(m, "error", "promptId") == "" {
		t.Fatalf("second: %d %s (Retry-After %q)", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
}

func TestProvidersRoute(t *testing.T) {
	f := newSendFixture(t, nil)
	var recs []*store.ProviderRecord
	for _, name := range []string{"openai", "anthropic", "gemini", "ollama", "azure_openai", "custom"} {
		c := *f.providers[name]
		if name == "gemini" {
			c.Availability = provider.Availability{ProjectIDs: []string{"p9"}}
			c.ProjectID = "p1"
		}
		if name == "ollama" {
			c.RedTeam = true
		}
		rec, err := ProviderRecord("o1", &c)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if err := f.s.SyncProviders("o1", recs, time.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"openai", "anthropic", "gemini", "ollama", "azure_openai", "custom"}},
		{"?redTeam=true", []string{"ollama"}},
		{"?availableGlobally=false", []string{"gemini"}},
		{"?addedToProjectId=p1", []string{"gemini"}},
		{"?groupId=p1", []string{"gemini"}},
		{"?accessibleToProjectId=p9&availableGlobally=false", []string{"gemini"}},
		{"?endpoint=default", []string{"openai", "custom"}},
		{"?configAt=2000-01-01T00:00:00Z", nil},
	}
	for _, tt := range tests {
		w, m := f.call(t, "GET", "/backend/v1/providers"+tt.query, tokAlice, "", "")
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", tt.query, w.Code, w.Body)
		}
		var got []string
		for _, p := range m["providers"].([]any) {
			got = append(got, p.(map[string]any)["name"].(string))
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: %v, want %v", tt.query, got, tt.want)
		}
	}
	// Paging: 6 providers, 4 per page.
	w, m := f.call(t, "GET", "/backend/v1/providers?limit=4", tokAlice, "", "")
	if w.Code != 200 || len(m["providers"].([]any)) != 4 || m["next"] == "" || m["prev"] != "" {
		t.Fatalf("page 1: %s", w.Body)
	}
	w, m = f.call(t, "GET", "/backend/v1/providers?limit=4&cursor="+m["next"].(string), tokAlice, "", "")
	if w.Code != 200 || len(m["providers"].([]any)) != 2 || m["next"] != "" || m["prev"] == "" {
		t.Fatalf("page 2: %s", w.Body)
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?cursor=bogus", "?redTeam=yes", "?configAt=yesterday", "?bogus=1", "?endpoint=nope", "?groupId=a&addedToProjectId=b"} {
		if w, _ := f.call(t, "GET", "/backend/v1/providers"+q, tokAlice, "", ""); w.Code != 400 {
			t.Errorf("%s: %d, want 400", q, w.Code)
		}
	}
	p0 := m["providers"].([]any)[0].(map[string]any)
	if p0["secrets"].(map[string]any)[provider.SecretAPIKey] != provider.Masked {
		t.Errorf("secrets not masked: %v", p0["secrets"])
	}
	f.checkNoSecrets(t)
}

func TestChatAccess(t *testing.T) {
	f := newSendFixture(t, nil)
	w, m := f.call(t, "POST", "/backend/v1/chats", tokAlice, "application/json", `{"name":"mine","access":{"users":["bob"]}}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	chatID := field(m, "chat", "id").(string)
	if w, _ := f.send(t, tokAlice, map[string]any{"input": "in chat", "provider": "openai", "chatId": chatID}); w.Code != 200 {
		t.Fatalf("send in chat: %d %s", w.Code, w.Body)
	}
	_ = f.s.Sync(context.Background())
	// carol is a member of o1 who is not given access.
	tokCarol := "pw_carol_0123456789abcdef0123456789abcdef"
	if err := f.s.PutUser(&store.User{ID: "carol", OrgID: "o1", Role: store.RoleMember}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.PutToken(&store.Token{Hash: sha256.Sum256([]byte(tokCarol)), UserID: "carol", OrgID: "o1"}); err != nil {
		t.Fatal(err)
	}
	get := func(tok string) (int, map[string]any) {
		w, m := f.call(t, "GET", "/backend/v1/chats/"+chatID, tok, "", "")
		return w.Code, m
	}
	for _, tt := range []struct {
		who  string
		tok  string
		want int
	}{{"creator", tokAlice, 200}, {"listed user", tokBob, 200}, {"other user", tokCarol, 404}, {"other org", tokOther, 404}} {
		code, m := get(tt.tok)
		if code != tt.want {
			t.Errorf("%s: %d, want %d", tt.who, code, tt.want)
		}
		if code == 200 && (len(m["prompts"].([]any)) != 1 || field(m, "chat", "promptId") == "") {
			t.Errorf("%s: chat %v", tt.who, m)
		}
	}
	// Opening the chat to the org lets carol read it; she may not change it.
	if w, _ := f.call(t, "PATCH", "/backend/v1/chats/"+chatID, tokAlice, "application/json", `{"starred":true,"access":{"org":true}}`); w.Code != 200 {
		t.Fatalf("patch by creator: %d %s", w.Code, w.Body)
	}
	if code, m := get(tokCarol); code != 200 || field(m, "chat", "starred") != true {
		t.Fatalf("org-wide chat for carol: %d %v", code, m)
	}
	if w, _ := f.call(t, "PATCH", "/backend/v1/chats/"+chatID, tokCarol, "application/json", `{"name":"hijack"}`); w.Code != 403 {
		t.Fatalf("patch by reader: %d", w.Code)
	}
	if code, _ := get(tokOther); code != 404 {
		t.Fatalf("other org after org-wide: %d", code)
	}
	for _, tt := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/backend/v1/chats/not-a-uuid", "", 400},
		{"GET", "/backend/v1/chats/" + store.NewID(), "", 404},
		{"POST", "/backend/v1/chats", `{"name":"x","access":{"users":["eve"]}}`, 400},
		{"POST", "/backend/v1/chats", `{}`, 400},
	} {
		if w, _ := f.call(t, tt.method, tt.path, tokAlice, "application/json", tt.body); w.Code != tt.want {
			t.Errorf("%s %s %s: %d, want %d", tt.method, tt.path, tt.body, w.Code, tt.want)
		}
	}
}

func TestPromptTemplates(t *testing.T) {
	f := newSendFixture(t, nil)
	_, m := f.send(t, tokAlice, map[string]any{"input": "template source", "provider": "openai"})
	src := m["id"].(string)
	_ = f.s.Sync(context.Background())
	w, m := f.call(t, "POST", "/backend/v1/prompts/templates", tokAlice, "application/json", `{"name":"t","promptId":"`+src+`"}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	tid := field(m, "promptTemplate", "id").(string)
	if w, _ := f.send(t, tokAlice, map[string]any{"input": "from template", "provider": "openai", "promptTemplateId": tid, "fromTemplate": true}); w.Code != 200 {
		t.Fatalf("send from template: %d", w.Code)
	}
	_ = f.s.Sync(context.Background())
	w, m = f.call(t, "GET", "/backend/v1/prompts/templates/"+tid, tokAlice, "", "")
	if w.Code != 200 || len(m["prompts"].([]any)) != 2 {
		t.Fatalf("get: %d %s", w.Code, w.Body)
	}
	if fromT := m["prompts"].([]any)[1].(map[string]any); fromT["fromTemplate"] != true {
		t.Errorf("second prompt %v", fromT)
	}
	for _, tt := range []struct {
		tok, path string
		want      int
	}{
		{tokOther, tid, 404},
		{tokAlice, "nope", 400},
		{tokAlice, store.NewID(), 404},
		{tokBob, tid, 200}, // an admin of the org
	} {
		if w, _ := f.call(t, "GET", "/backend/v1/prompts/templates/"+tt.path, tt.tok, "", ""); w.Code != tt.want {
			t.Errorf("GET template %s as %s: %d, want %d", tt.path, tt.tok[:8], w.Code, tt.want)
		}
	}
	if w, _ := f.call(t, "POST", "/backend/v1/prompts/templates", tokOther, "application/json", `{"name":"t","promptId":"`+src+`"}`); w.Code != 404 {
		t.Errorf("template of another org's prompt: %d", w.Code)
	}
}
