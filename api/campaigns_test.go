package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/redteam"
	"github.com/promptwall/promptwall/store"
)

type fakeRunner struct {
	s       *store.Store
	started []string
}

func (f *fakeRunner) Start(_ context.Context, org, campaign, user string) (*store.CampaignRun, error) {
	c, err := f.s.GetCampaign(campaign)
	if err != nil || c.OrgID != org {
		return nil, redteam.ErrCampaignNotFound
	}
	f.started = append(f.started, campaign+"/"+user)
	r := &store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: store.NewID(), Name: c.Name, CampaignID: c.ID, CreatedBy: user, Status: store.RunQueued, Total: "0"}, OrgID: org}
	return r, f.s.CreateCampaignRun(r)
}

func (f *fakeRunner) Cancel(org, id string) (*store.CampaignRun, error) {
	r, err := f.s.GetCampaignRun(id, false)
	if err != nil || r.OrgID != org {
		return nil, redteam.ErrRunNotFound
	}
	r.Status = store.RunCancelled
	return r, f.s.SaveCampaignRun(r)
}

type orgGate map[string]bool

func (g orgGate) RedTeamEnabled(org string) (bool, error) { return g[org], nil }

const (
	campA = "0b9c6c1e-0000-4000-8000-00000000000a"
	campB = "0b9c6c1e-0000-4000-8000-00000000000b"
)

// campaignFixture: 12 runs in o1 (campaign A "Alpha N" with schedule
// s-a for even N, campaign B "Beta N"), statuses cycling, one run in o2.
func campaignFixture(t *testing.T, gate RedTeamGate) (*fixture, *fakeRunner, []*store.CampaignRun) {
	t.Helper()
	f := newFixture(t)
	s := f.s
	for _, c := range []*store.Campaign{
		{ID: campA, OrgID: "o1", Name: "Alpha", Providers: []string{"p1", "p2"}, Packs: []string{"prompt_injection"}, SystemPrompt: "secret prompt"},
		{ID: campB, OrgID: "o1", Name: "Beta", Providers: []string{"p1"}, Packs: []string{"jailbreak_roleplay"}},
	} {
		if err := s.PutCampaign(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutCampaignSchedule(&store.CampaignSchedule{ID: "s-a", OrgID: "o1", CampaignID: campA, Schedule: "6h", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	statuses := []string{store.RunCompleted, store.RunFailed, store.RunRunning, store.RunCancelled}
	base := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	var runs []*store.CampaignRun
	for i := range 12 {
		r := &store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: store.NewID(), Status: statuses[i%4], Total: "1",
			Progress: 1, CASIScore: "75.00", CreatedAt: store.Timestamp(base.Add(time.Duration(i) * time.Hour)),
			// startAt runs backwards, so its order differs from createdAt's.
			StartAt: store.Timestamp(base.Add(time.Duration(100-i) * time.Hour))},
			OrgID: "o1", Providers: []string{"p1"}}
		if i%2 == 0 {
			r.CampaignID, r.Name, r.ScheduleID = campA, fmt.Sprintf("Alpha %02d", i), "s-a"
		} else {
			r.CampaignID, r.Name = campB, fmt.Sprintf("Beta %02d", i)
		}
		r.AttackRuns = []*store.AttackRun{{
			AttackRunFields: store.AttackRunFields{ID: store.NewID(), ProviderID: "p2", Total: "2", Progress: 1, ErrorCount: 1},
			CampaignRunID:   r.ID,
			Attack: store.AttackSpec{ID: "x", AttackFields: store.AttackFields{Pack: "prompt_injection", Severity: 3,
				Technique: "static_content", Vector: "direct", Converters: []string{"base64"}}},
			Events: []store.AttackRunEvent{{AttackEvent: store.AttackEvent{CreatedAt: r.CreatedAt, Event: store.EventQueued}}},
			Results: []store.AttackResult{{AttackResultFields: store.AttackResultFields{Converter: "base64", Fingerprint: "fp",
				Intent: "i", IntentCategory: "c", Error: "boom", ErrorSummary: "boom", Outcome: "error",
				Conversation: []store.ChatMessage{{Role: "user", Content: "hi"}}}}}}}
		if err := s.CreateCampaignRun(r); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	if err := s.CreateCampaignRun(&store.CampaignRun{CampaignRunFields: store.CampaignRunFields{ID: store.NewID(), Name: "Alpha other", Status: store.RunCompleted}, OrgID: "o2"}); err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{s: s}
	boot := [32]byte{}
	h, err := New(Config{Store: s, Campaigns: fr, RedTeam: gate, BootstrapTokenHash: &boot, BootstrapOrgID: "o1",
		ProviderLookup: func(org, id string) (any, bool) {
			if id == "p1" {
				return map[string]string{"id": id, "name": "OpenAI " + org}, true
			}
			return nil, false
		}})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f, fr, runs
}

func decodeRuns(t *testing.T, w *httptest.ResponseRecorder) (CampaignRunList, map[string]any) {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var l CampaignRunList
	var raw map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal(w.Body.Bytes(), &raw)
	return l, raw
}

func runNames(l CampaignRunList) string {
	var n []string
	for _, r := range l.CampaignRuns {
		n = append(n, r.Name)
	}
	return strings.Join(n, ",")
}

func TestListCampaignRuns(t *testing.T) {
	f, _, _ := campaignFixture(t, orgGate{"o1": true, "o2": true})
	tests := []struct {
		query, want string
	}{
		{"", "Beta 11,Alpha 10,Beta 09,Alpha 08,Beta 07,Alpha 06,Beta 05,Alpha 04,Beta 03,Alpha 02"},
		{"?ascending=true&limit=3", "Alpha 00,Beta 01,Alpha 02"},
		{"?status=running&status=failed&ascending=true", "Beta 01,Alpha 02,Beta 05,Alpha 06,Beta 09,Alpha 10"},
		{"?search=ALPHA&limit=100", "Alpha 10,Alpha 08,Alpha 06,Alpha 04,Alpha 02,Alpha 00"},
		{"?campaignScheduleId=s-a&status=completed", "Alpha 08,Alpha 04,Alpha 00"},
		{"?sortBy=name&ascending=true&limit=4", "Alpha 00,Alpha 02,Alpha 04,Alpha 06"},
		{"?sortBy=name&limit=2", "Beta 11,Beta 09"},
		{"?sortBy=start_at&ascending=true&limit=2", "Beta 11,Alpha 10"},
		{"?sortBy=created_at&ascending=true&limit=2", "Alpha 00,Beta 01"},
		{"?search=nothing", ""},
	}
	for _, tt := range tests {
		l, _ := decodeRuns(t, f.do(t, "GET", "/backend/v1/campaign-runs"+tt.query, tokOwner))
		if got := runNames(l); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.query, got, tt.want)
		}
	}

	// Spec types and default includes: campaigns yes, providers and
	// schedules as {}.
	l, raw := decodeRuns(t, f.do(t, "GET", "/backend/v1/campaign-runs?limit=2", tokAlice))
	run := raw["campaignRuns"].([]any)[0].(map[string]any)
	if _, ok := run["total"].(string); !ok {
		t.Errorf("total is %T", run["total"])
	}
	if _, ok := run["progress"].(float64); !ok {
		t.Errorf("progress is %T", run["progress"])
	}
	if _, ok := run["CASIScore"].(string); !ok {
		t.Errorf("CASIScore is %T", run["CASIScore"])
	}
	ar := run["attackRuns"].([]any)[0].(map[string]any)
	if ec, ok := ar["errorCount"].(float64); !ok || ec != 1 {
		t.Errorf("errorCount %v", ar["errorCount"])
	}
	if len(l.Campaigns) != 2 || len(l.Providers) != 0 || len(l.Schedules) != 0 || raw["providers"] == nil || raw["schedules"] == nil {
		t.Errorf("default includes: %v %v %v", l.Campaigns, raw["providers"], raw["schedules"])
	}
	if strings.Contains(fmt.Sprint(raw["campaigns"]), "secret prompt") {
		t.Error("campaign system prompt served")
	}
	l, _ = decodeRuns(t, f.do(t, "GET", "/backend/v1/campaign-runs?limit=2&includeCampaigns=false&includeProviders=true&includeSchedules=true", tokOwner))
	if len(l.Campaigns) != 0 || len(l.Schedules) != 1 || len(l.Providers) != 2 {
		t.Errorf("includes: campaigns %v schedules %v providers %v", l.Campaigns, l.Schedules, l.Providers)
	}
	if p1 := fmt.Sprint(l.Providers["p1"]); !strings.Contains(p1, "OpenAI o1") || fmt.Sprint(l.Providers["p2"]) != "map[id:p2]" {
		t.Errorf("providers %v", l.Providers)
	}

	// Other org sees only its own run.
	l, _ = decodeRuns(t, f.do(t, "GET", "/backend/v1/campaign-runs?limit=100", tokOther))
	if runNames(l) != "Alpha other" {
		t.Errorf("o2 sees %s", runNames(l))
	}

	// Bad parameters.
	for _, q := range []string{"?status=done", "?sortBy=id", "?limit=0", "?limit=101", "?includeCampaigns=yes", "?cursor=abc", "?campaignScheduleId=", "?colour=red"} {
		if w := f.do(t, "GET", "/backend/v1/campaign-runs"+q, tokOwner); w.Code != 400 {
			t.Errorf("%s: %d %s", q, w.Code, w.Body)
		}
	}
}

func TestCampaignRunsPaging(t *testing.T) {
	f, _, _ := campaignFixture(t, nil)
	for _, sortBy := range []string{"", "&sortBy=name", "&sortBy=start_at"} {
		for _, asc := range []string{"", "&ascending=true"} {
			base := "/backend/v1/campaign-runs?limit=5" + sortBy + asc
			all, _ := decodeRuns(t, f.do(t, "GET", "/backend/v1/campaign-runs?limit=100"+sortBy+asc, tokOwner))
			var pages []CampaignRunList
			next := ""
			for {
				target := base
				if next != "" {
					target += "&cursor=" + next
				}
				l, _ := decodeRuns(t, f.do(t, "GET", target, tokOwner))
				pages = append(pages, l)
				if l.Next == "" {
					break
				}
				next = l.Next
			}
			var walked []string
			for _, p := range pages {
				walked = append(walked, runNames(p))
			}
			if strings.Join(walked, ",") != runNames(all) || len(pages) != 3 || pages[0].Prev != "" {
				t.Fatalf("%s: walked %v, all %s", base, walked, runNames(all))
			}
			// prev from the last page returns the middle page.
			back, _ := decodeRuns(t, f.do(t, "GET", base+"&cursor="+pages[2].Prev, tokOwner))
			if runNames(back) != runNames(pages[1]) || back.Next != pages[1].Next {
				t.Fatalf("%s: prev page %s, want %s", base, runNames(back), runNames(pages[1]))
			}
			// A cursor is bound to its query.
			if w := f.do(t, "GET", "/backend/v1/campaign-runs?limit=5&status=failed&cursor="+pages[0].Next, tokOwner); w.Code != 400 {
				t.Fatalf("cursor reused with other filters: %d", w.Code)
			}
			tampered := []byte(pages[0].Next)
			tampered[3] ^= 1
			if w := f.do(t, "GET", base+"&cursor="+string(tampered), tokOwner); w.Code != 400 {
				t.Fatalf("tampered cursor: %d", w.Code)
			}
		}
	}
}

func TestCampaignRunRoutes(t *testing.T) {
	f, fr, runs := campaignFixture(t, orgGate{"o1": true})
	start := "/backend/v1/campaigns/" + campA + "/runs"
	w := f.do(t, "POST", start, tokOwner)
	if w.Code != 202 {
		t.Fatalf("start: %d %s", w.Code, w.Body)
	}
	var resp CampaignRunResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.CampaignRun.Status != store.RunQueued || resp.CampaignRun.CreatedBy != "owner" {
		t.Fatalf("start response %+v %v", resp, err)
	}
	if len(fr.started) != 1 || fr.started[0] != campA+"/owner" {
		t.Fatalf("runner saw %v", fr.started)
	}
	cancel := "/backend/v1/campaign-runs/" + runs[2].ID + "/cancel"
	w = f.do(t, "POST", cancel, tokBob)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"cancelled"`) {
		t.Fatalf("cancel: %d %s", w.Code, w.Body)
	}
	tests := []struct {
		name, method, target, token string
		want                        int
	}{
		{"member may not start", "POST", start, tokAlice, 403},
		{"member may list", "GET", "/backend/v1/campaign-runs", tokAlice, 200},
		{"feature off for o2", "GET", "/backend/v1/campaign-runs", tokOther, 403},
		{"feature off start", "POST", start, tokOther, 403},
		{"unknown campaign", "POST", "/backend/v1/campaigns/" + campB[:35] + "c/runs", tokOwner, 404},
		{"malformed id", "POST", "/backend/v1/campaigns/nope/runs", tokOwner, 400},
		{"unknown run", "POST", "/backend/v1/campaign-runs/" + campA + "/cancel", tokOwner, 404},
		{"GET on cancel", "GET", cancel, tokOwner, 405},
	}
	for _, tt := range tests {
		if w := f.do(t, tt.method, tt.target, tt.token); w.Code != tt.want {
			t.Errorf("%s: %d, want %d: %s", tt.name, w.Code, tt.want, w.Body)
		}
	}
	// Documented body fields the runner does not take are refused.
	r := httptest.NewRequest("POST", start, strings.NewReader(`{"startAt":"2026-01-01T00:00:00Z"}`))
	r.Header.Set("Authorization", "Bearer "+tokOwner)
	r.Header.Set("Content-Type", "application/json")
	rw := httptest.NewRecorder()
	f.h.ServeHTTP(rw, r)
	if rw.Code != 400 || !strings.Contains(rw.Body.String(), `"param":"startAt"`) {
		t.Fatalf("startAt: %d %s", rw.Code, rw.Body)
	}
}
