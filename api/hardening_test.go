package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// An id returned by POST /prompts is readable, and usable as a parentId or
// a template's source, at once: no Sync between the calls.
func TestPromptIDReadableAtOnce(t *testing.T) {
	f := newSendFixture(t, nil)
	for i := range 5 {
		_, m := f.send(t, tokAlice, map[string]any{"input": "first", "provider": "openai"})
		id, _ := m["id"].(string)
		if w, _ := f.call(t, "GET", "/backend/v1/prompts/"+id, tokAlice, "", ""); w.Code != 200 {
			t.Fatalf("round %d: GET of a returned id: %d %s", i, w.Code, w.Body)
		}
		if w, _ := f.send(t, tokAlice, map[string]any{"input": "follow-up", "provider": "openai", "parentId": id}); w.Code != 200 {
			t.Fatalf("round %d: follow-up with the returned parentId: %d %s", i, w.Code, w.Body)
		}
		if w, _ := f.call(t, "POST", "/backend/v1/prompts/templates", tokAlice, "application/json", `{"name":"t","promptId":"`+id+`"}`); w.Code != 201 {
			t.Fatalf("round %d: template from the returned id: %d %s", i, w.Code, w.Body)
		}
	}
}

// The API refuses what the gateway refuses: keys equal but for case, and
// repeated keys, which encoding/json would silently resolve.
func TestAPIBodyKeys(t *testing.T) {
	f := newSendFixture(t, nil)
	cases := []struct {
		name, body, param, msg string
	}{
		{"case variant", `{"input":"hello","provider":"openai","Input":"AKIAZ7VRSQ4LMXWB2PEH"}`, "Input", "duplicate key"},
		{"repeated key", `{"input":"hello","provider":"openai","input":"other"}`, "input", "duplicate key"},
		{"nested variant", `{"input":"hello","provider":"openai","externalMetadata":"m","access":{"a":1,"A":2}}`, "access.A", "duplicate key"},
		{"top-level array", `[{"input":"hello"}]`, "", "the request body must be a JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, m := f.call(t, "POST", "/backend/v1/prompts", tokAlice, "application/json", tc.body)
			e, _ := m["error"].(map[string]any)
			param, _ := e["param"].(string)
			if w.Code != 400 || e["code"] != "invalid_parameter" || param != tc.param || !strings.Contains(e["message"].(string), tc.msg) {
				t.Fatalf("got %d %s", w.Code, w.Body)
			}
		})
	}
	// Every other route that reads a body applies the same rule.
	campaigns, _, _ := campaignFixture(t, orgGate{"o1": true})
	routes := []struct {
		name, target, body, param string
		h                         http.Handler
	}{
		{"POST /chats", "/backend/v1/chats", `{"name":"c","Name":"d"}`, "Name", f.api},
		{"POST /prompts/templates", "/backend/v1/prompts/templates", `{"NAME":"u","name":"t"}`, "name", f.api},
		{"POST /campaigns/{id}/runs", "/backend/v1/campaigns/" + campA + "/runs", `{"x":{"k":1,"K":2}}`, "x.K", campaigns.h},
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			w, m, err := ownerPost(rt.h, rt.target, rt.body)
			if err != nil || w.Code != 400 || m.Error.Code != "invalid_parameter" ||
				m.Error.Param == nil || *m.Error.Param != rt.param || !strings.Contains(m.Error.Message, "duplicate key") {
				t.Fatalf("got %d %s, want 400 invalid_parameter at %q", w.Code, w.Body, rt.param)
			}
		})
	}
}

// A member reading their own template sees only the prompts they may
// read, not those an admin sent from it.
func TestTemplateShowsOnlyReadablePrompts(t *testing.T) {
	f := newSendFixture(t, nil)
	_, m := f.send(t, tokAlice, map[string]any{"input": "alice's source", "provider": "openai"})
	w, m := f.call(t, "POST", "/backend/v1/prompts/templates", tokAlice, "application/json", `{"name":"t","promptId":"`+m["id"].(string)+`"}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	tid := field(m, "promptTemplate", "id").(string)
	if w, _ := f.send(t, tokBob, map[string]any{"input": "bob's secret plan", "provider": "openai", "promptTemplateId": tid, "fromTemplate": true}); w.Code != 200 {
		t.Fatalf("admin sends from the template: %d %s", w.Code, w.Body)
	}
	for _, tc := range []struct {
		tok  string
		want int
	}{{tokAlice, 1}, {tokBob, 2}} {
		w, m := f.call(t, "GET", "/backend/v1/prompts/templates/"+tid, tc.tok, "", "")
		if w.Code != 200 {
			t.Fatalf("get: %d", w.Code)
		}
		if n := len(m["prompts"].([]any)); n != tc.want || (tc.tok == tokAlice && strings.Contains(w.Body.String(), "bob's secret plan")) {
			t.Errorf("%s sees %d prompts, want %d: %s", tc.tok[:8], n, tc.want, w.Body)
		}
	}
}

// An oversized body is refused with 413 and the code that says so, on
// every route that reads one.
func TestTooLargeBodies(t *testing.T) {
	send := newSendFixture(t, nil)
	campaigns, _, _ := campaignFixture(t, orgGate{"o1": true})
	cases := []struct {
		name, target string
		h            http.Handler
		body         string
	}{
		{"POST /prompts", "/backend/v1/prompts", send.api,
			`{"input":"` + strings.Repeat("a", maxJSONBody) + `","provider":"openai"}`},
		{"POST /campaigns/{id}/runs", "/backend/v1/campaigns/" + campA + "/runs", campaigns.h,
			`{"name":"` + strings.Repeat("a", maxRunBody) + `"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, m, err := ownerPost(tc.h, tc.target, tc.body)
			if err != nil || w.Code != http.StatusRequestEntityTooLarge || m.Error.Code != "request_too_large" {
				t.Fatalf("got %d %.200s, want 413 with code request_too_large", w.Code, w.Body)
			}
			if !strings.Contains(m.Error.Message, "exceeds") {
				t.Errorf("the message does not state the limit: %q", m.Error.Message)
			}
		})
	}
}

// piiScreener flags an e-mail address in the input, as the pii scanner
// does, and passes the answer.
type piiScreener struct{ email string }

func (s piiScreener) ScreenEndpoint(string) (ScreenEndpoint, bool) {
	return ScreenEndpoint{ID: "ep-1", Name: "default", Scanners: `[{"id":"pii","mode":"flag"}]`,
		Screen: func(_ context.Context, conv *scanner.Conversation, dir scanner.Direction) *scanner.Result {
			sr := scanner.ScannerResult{ScannerID: "pii", Type: "pii", Direction: dir, Outcome: scanner.Passed}
			for i, m := range conv.Messages {
				if at := strings.Index(m.Text, s.email); at >= 0 && dir == scanner.Input {
					sr.Outcome = scanner.Flagged
					sr.Findings = append(sr.Findings, scanner.MessageFinding{Message: i, Role: m.Role,
						Match: scanner.Match{Start: at, End: at + len(s.email), Kind: "EMAIL_ADDRESS", Score: 1}})
				}
			}
			return &scanner.Result{Outcome: sr.Outcome, Scanners: []scanner.ScannerResult{sr}}
		}}, true
}

// Personal data the input's scanners found is masked in the stored
// answer when the model echoes it, as in the input and the raw answer.
func TestEchoedPersonalDataMaskedInSentPrompt(t *testing.T) {
	const email = "ada.lovelace@example.org"
	up := newUpstream(t, `{"choices":[{"message":{"role":"assistant","content":"I will write to `+email+` today."}}]}`)
	f := newSendFixture(t, nil)
	c := &provider.Config{Name: "echo", Type: provider.TypeOpenAI, Model: "m", BaseURL: up.srv.URL,
		Secrets: map[string]string{provider.SecretAPIKey: upstreamKey}, Availability: provider.Availability{Global: true}}
	c.Provision()
	f.providers["echo"] = c
	h, err := New(Config{Store: f.s, Providers: f.providers, Screener: piiScreener{email}, LimitWait: -1})
	if err != nil {
		t.Fatal(err)
	}
	f.api = h
	w, m := f.send(t, tokAlice, map[string]any{"input": "Please email me at " + email, "provider": "echo"})
	if w.Code != 200 || field(m, "result", "outcome") != "flagged" {
		t.Fatalf("send: %d %s", w.Code, w.Body)
	}
	id, _ := m["id"].(string)
	for _, view := range []struct {
		name string
		body string
	}{
		{"POST answer", w.Body.String()},
		{"GET", func() string {
			w, _ := f.call(t, "GET", "/backend/v1/prompts/"+id, tokAlice, "", "")
			return w.Body.String()
		}()},
	} {
		if strings.Contains(view.body, email) {
			t.Errorf("%s: the address is in clear: %s", view.name, view.body)
		}
		if !strings.Contains(view.body, `"response":"I will write to `) {
			t.Errorf("%s: the response is missing: %s", view.name, view.body)
		}
	}
}

// A member reaches no prompt another user sent, by any route that takes a
// prompt id; the admin who sent it reaches it by each.
func TestPromptVisibilityOnEveryRoute(t *testing.T) {
	f := newSendFixture(t, nil)
	_, m := f.send(t, tokBob, map[string]any{"input": "bob's plan", "provider": "openai"})
	id, _ := m["id"].(string)
	routes := []struct {
		name, method, target, body string
		ok                         int
	}{
		{"GET /prompts/{id}", "GET", "/backend/v1/prompts/" + id, "", 200},
		{"template from it", "POST", "/backend/v1/prompts/templates", `{"name":"t","promptId":"` + id + `"}`, 201},
		{"follow-up to it", "POST", "/backend/v1/prompts", `{"input":"and then?","provider":"openai","parentId":"` + id + `"}`, 200},
	}
	for _, rt := range routes {
		for _, who := range []struct {
			name, tok string
			want      int
		}{{"member", tokAlice, 404}, {"sender", tokBob, rt.ok}} {
			t.Run(rt.name+"/"+who.name, func(t *testing.T) {
				ct := ""
				if rt.body != "" {
					ct = "application/json"
				}
				w, _ := f.call(t, rt.method, rt.target, who.tok, ct, rt.body)
				if w.Code != who.want {
					t.Fatalf("%d %s, want %d", w.Code, w.Body, who.want)
				}
				if who.want == 404 && strings.Contains(w.Body.String(), "bob's plan") {
					t.Fatalf("the refusal quotes the prompt: %s", w.Body)
				}
			})
		}
	}
}

// An id POST /prompts returns, in a chat or not, is on disk by then in
// both durability modes: a copy of the database file taken as the answer
// arrives holds the record and the chat's reference to it, though the
// batched writer would wait a second to fill its batch.
func TestSentPromptOnDiskWhenReturned(t *testing.T) {
	for _, d := range []store.Durability{store.DurabilityBatched, store.DurabilitySync} {
		for _, inChat := range []bool{false, true} {
			t.Run(fmt.Sprint(d, " in chat ", inChat), func(t *testing.T) {
				f := newSendFixtureWith(t, nil, store.Options{Durability: d, BatchWait: time.Second})
				body := map[string]any{"input": "hello", "provider": "openai"}
				if inChat {
					body["chatName"] = "c"
				}
				w, m := f.send(t, tokAlice, body)
				if w.Code != 200 {
					t.Fatalf("send: %d %s", w.Code, w.Body)
				}
				b, err := os.ReadFile(f.s.Path())
				if err != nil {
					t.Fatal(err)
				}
				copyPath := filepath.Join(t.TempDir(), "copy.db")
				if err := os.WriteFile(copyPath, b, 0o600); err != nil {
					t.Fatal(err)
				}
				c, err := store.Open(store.Options{Path: copyPath})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				id, _ := m["id"].(string)
				pr, err := c.GetPrompt(id)
				if err != nil {
					t.Fatalf("the returned id %s is not in the file: %v", id, err)
				}
				if inChat {
					prompts, err := c.ChatPrompts(pr.ChatID)
					if err != nil || len(prompts) != 1 || prompts[0].ID != id {
						t.Fatalf("the chat does not reference the prompt on disk: %v %v", prompts, err)
					}
				}
			})
		}
	}
}

// ownerPost sends body as JSON to h with the owner's token and decodes the
// error the answer carries.
func ownerPost(h http.Handler, target, body string) (*httptest.ResponseRecorder, errResp, error) {
	r := httptest.NewRequest("POST", target, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+tokOwner)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var m errResp
	err := json.Unmarshal(w.Body.Bytes(), &m)
	return w, m, err
}
