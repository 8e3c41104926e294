package caddymodule

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/promptwall/promptwall/redteam"
	"github.com/promptwall/promptwall/store"
)

// campaignCommand starts a campaign in the running gateway through its API
// (the gateway holds the database) and follows the run to its end.
func campaignCommand() *cobra.Command {
	c := &cobra.Command{Use: "campaign", Short: "Run red-team campaigns"}
	run := &cobra.Command{
		Use:   "run <campaign name> [--api <gateway URL>] [--token <token>] [--no-wait]",
		Short: "Start a declared campaign in the running gateway and follow its progress",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			api, _ := f.GetString("api")
			token, _ := f.GetString("token")
			if token == "" {
				token = os.Getenv(BootstrapEnv)
			}
			if token == "" {
				if b, err := os.ReadFile(".promptwall/demo-token"); err == nil {
					token = strings.TrimSpace(string(b))
				}
			}
			if token == "" {
				return errors.New("no API token: pass --token or set " + BootstrapEnv)
			}
			noWait, _ := f.GetBool("no-wait")
			poll, _ := f.GetDuration("poll")
			cl := apiClient{base: strings.TrimRight(api, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
			return runCampaign(cmd.OutOrStdout(), cl, args[0], !noWait, poll)
		},
	}
	run.Flags().String("api", "http://localhost:8080", "Base URL where the gateway serves /backend/v1")
	run.Flags().String("token", "", "API token (default: $"+BootstrapEnv+", else .promptwall/demo-token)")
	run.Flags().Bool("no-wait", false, "Return once the run is queued")
	run.Flags().Duration("poll", time.Second, "How often to poll the run's progress")
	c.AddCommand(run)
	return c
}

type apiClient struct {
	base, token string
	http        *http.Client
}

func (c apiClient) do(method, path string, out any) error {
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(nil))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Body = io.NopCloser(strings.NewReader("{}"))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		_ = json.Unmarshal(body, &e)
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error.Message)
	}
	return json.Unmarshal(body, out)
}

// campaignRunView is the part of a CampaignRun the command prints.
type campaignRunView struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Status     string  `json:"status"`
	Progress   float64 `json:"progress"`
	Total      string  `json:"total"`
	CASIScore  string  `json:"CASIScore"`
	AttackRuns []struct {
		ErrorCount int    `json:"errorCount"`
		Target     string `json:"target"`
		Attack     struct {
			Pack     string `json:"pack"`
			Severity int    `json:"severity"`
		} `json:"attack"`
		Results []struct {
			Converter  string `json:"converter"`
			Vulnerable bool   `json:"vulnerable"`
			Intent     string `json:"intent"`
			Outcome    string `json:"outcome"`
		} `json:"results"`
	} `json:"attackRuns"`
}

func runCampaign(w io.Writer, cl apiClient, name string, wait bool, poll time.Duration) error {
	var started struct {
		CampaignRun campaignRunView `json:"campaignRun"`
	}
	if err := cl.do(http.MethodPost, "/backend/v1/campaigns/"+campaignID(name)+"/runs", &started); err != nil {
		return err
	}
	run := started.CampaignRun
	fmt.Fprintf(w, "campaign %q: run %s %s\n", name, run.ID, run.Status)
	if !wait {
		return nil
	}
	last := ""
	for {
		var list struct {
			CampaignRuns []campaignRunView `json:"campaignRuns"`
		}
		q := url.Values{"search": {name}, "limit": {"100"}}
		if err := cl.do(http.MethodGet, "/backend/v1/campaign-runs?"+q.Encode(), &list); err != nil {
			return err
		}
		for _, r := range list.CampaignRuns {
			if r.ID == run.ID {
				run = r
			}
		}
		line := fmt.Sprintf("%s %3.0f%% of %s attacks", run.Status, run.Progress*100, run.Total)
		if line != last {
			fmt.Fprintln(w, line)
			last = line
		}
		switch run.Status {
		case "completed", "failed", "cancelled":
			printCampaignSummary(w, run)
			if run.Status != "completed" {
				return fmt.Errorf("run %s ended %s", run.ID, run.Status)
			}
			return nil
		}
		time.Sleep(poll)
	}
}

// printCampaignSummary prints, per target (the provider directly, or
// behind an endpoint) and pack, how many attempts were sent, succeeded and
// were blocked, then each target's CASI score, so that one run shows what
// the endpoint's policy is worth.
func printCampaignSummary(w io.Writer, run campaignRunView) {
	type key struct{ target, pack string }
	type tally struct {
		sent, vulnerable, blocked, errors int
		stats                             store.RunStats
	}
	rows := map[key]*tally{}
	byTarget := map[string]*tally{}
	var keys []key
	var targets []string
	for _, ar := range run.AttackRuns {
		k := key{ar.Target, ar.Attack.Pack}
		t := rows[k]
		if t == nil {
			t = &tally{}
			rows[k] = t
			keys = append(keys, k)
		}
		tt := byTarget[ar.Target]
		if tt == nil {
			tt = &tally{}
			byTarget[ar.Target] = tt
			targets = append(targets, ar.Target)
		}
		for _, res := range ar.Results {
			for _, x := range []*tally{t, tt} {
				x.sent++
				switch {
				case res.Outcome == redteam.OutcomeError:
					x.errors++
					continue
				case res.Vulnerable:
					x.vulnerable++
				default:
					x.stats.SeverityResisted += ar.Attack.Severity
				}
				if res.Outcome == redteam.OutcomeBlocked {
					x.blocked++
				}
				x.stats.SeverityJudged += ar.Attack.Severity
			}
		}
	}
	fmt.Fprintf(w, "\n%-18s %-26s %8s %11s %8s %7s\n", "target", "pack", "attempts", "vulnerable", "blocked", "errors")
	for _, k := range keys {
		t := rows[k]
		fmt.Fprintf(w, "%-18s %-26s %8d %11d %8d %7d\n", targetLabel(k.target), k.pack, t.sent, t.vulnerable, t.blocked, t.errors)
	}
	fmt.Fprintln(w)
	for _, tg := range targets {
		fmt.Fprintf(w, "CASI score %-18s %6s\n", targetLabel(tg)+":", redteam.CASIScore(byTarget[tg].stats))
	}
	fmt.Fprintf(w, "CASI score %-18s %6s (0-100, higher is safer)\n", "overall:", run.CASIScore)
}

// targetLabel names a target for the summary; runs recorded before targets
// were reported show as "-".
func targetLabel(t string) string {
	if t == "" {
		return "-"
	}
	return t
}
