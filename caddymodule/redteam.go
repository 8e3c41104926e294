package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/promptwall/promptwall/provider"
	"github.com/promptwall/promptwall/redteam"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// Campaign declares a red-team campaign in the app.
type Campaign struct {
	// Name identifies the campaign; its id is derived from it.
	Name string `json:"name"`
	// Providers are the names of the providers attacked.
	Providers []string `json:"providers,omitempty"`
	// Packs are the attack packs sent: built-in names or names of packs
	// loaded from PackFiles. Default: every built-in pack.
	Packs []string `json:"packs,omitempty"`
	// Converters each send every attack once more, converted (base64,
	// leetspeak, unicode_confusable, caesar, repeat_token,
	// single_character).
	Converters []string `json:"converters,omitempty"`
	// SystemPrompt is planted as the system message; "{{canary}}" in it is
	// replaced by a random secret per run. Default: a prompt with a canary.
	SystemPrompt string `json:"system_prompt,omitempty"`
	// Schedule is a cron expression or an interval ("6h"); "" runs only
	// when started.
	Schedule string `json:"schedule,omitempty"`
	// Targets are "provider" and/or "endpoint:<name>" (the provider behind
	// that endpoint's screening). Default: provider and endpoint:default.
	Targets []string `json:"targets,omitempty"`
}

// CampaignID derives a campaign's stable UUID from its name; the campaign
// command uses it to address a declared campaign through the API.
func CampaignID(name string) string { return endpointID("campaign/" + name) }

// provisionCampaigns validates the declared campaigns (stored when the
// config starts) and makes sure the shared runner exists.
func (a *App) provisionCampaigns() error {
	shared := a.shared
	if shared.runner == nil {
		var packs []*redteam.Pack
		for _, f := range a.PackFiles {
			p, err := redteam.LoadPack(f)
			if err != nil {
				return err
			}
			packs = append(packs, p)
		}
		lib, err := redteam.NewLibrary(packs...)
		if err != nil {
			return err
		}
		runner, err := redteam.NewRunner(redteam.Options{
			Store:    shared.store,
			Library:  lib,
			Target:   campaignTarget{shared},
			Screener: campaignScreener{shared},
			Features: orgFeatures{shared.store},
			Locker:   lockerOf(shared.engine),
			Logger:   a.logger.Named("redteam"),
		})
		if err != nil {
			return err
		}
		// Runs a previous process left running are marked failed, never
		// left "running" forever.
		if n, err := runner.Recover(); err != nil {
			return fmt.Errorf("recovering campaign runs: %w", err)
		} else if n > 0 {
			a.logger.Warn("campaign runs interrupted by the last shutdown were marked failed", zap.Int("runs", n))
		}
		ctx, cancel := context.WithCancel(context.Background())
		go runner.RunSchedules(ctx)
		shared.runner, shared.stopSchedules = runner, cancel
	}
	a.campaigns = make([]*store.Campaign, 0, len(a.Campaigns))
	for _, c := range a.Campaigns {
		sc, err := a.storedCampaign(c)
		if err != nil {
			return fmt.Errorf("campaign %q: %w", c.Name, err)
		}
		a.campaigns = append(a.campaigns, sc)
	}
	return nil
}

// storedCampaign validates c and returns it as stored.
func (a *App) storedCampaign(c Campaign) (*store.Campaign, error) {
	sc := &store.Campaign{
		ID: CampaignID(c.Name), OrgID: defaultOrgID(), Name: c.Name,
		Packs: c.Packs, Converters: c.Converters, SystemPrompt: c.SystemPrompt,
		Schedule: c.Schedule, Targets: c.Targets,
	}
	if len(sc.Packs) == 0 {
		sc.Packs = redteam.BuiltinPackNames
	}
	if sc.SystemPrompt == "" {
		sc.SystemPrompt = redteam.DefaultSystemPrompt
	}
	if len(sc.Targets) == 0 {
		sc.Targets = []string{"provider", "endpoint:" + DefaultEndpointName}
	}
	for _, name := range c.Providers {
		p, ok := a.provider(name)
		if !ok {
			return nil, fmt.Errorf("unknown provider %q", name)
		}
		sc.Providers = append(sc.Providers, p.cfg.ID)
	}
	if _, err := a.shared.runner.ValidateCampaign(sc); err != nil {
		return nil, err
	}
	return sc, nil
}

// campaignTarget sends attacks through the current config's providers,
// under the same rate and concurrency limits as live traffic.
type campaignTarget struct{ shared *sharedState }

// attackQueueWait bounds how long an attack waits for its provider's limits:
// campaigns yield to live traffic rather than fail at once.
const attackQueueWait = 30 * time.Second

func (t campaignTarget) Send(ctx context.Context, providerID string, conv []redteam.Message) (string, error) {
	a := t.shared.current.Load()
	if a == nil {
		return "", errNotRunning
	}
	p, ok := a.provider(providerID)
	if !ok {
		return "", fmt.Errorf("provider %s is no longer configured", providerID)
	}
	release, err := p.limiter.Acquire(ctx, attackQueueWait)
	if err != nil {
		return "", err
	}
	defer release()
	msgs := make([]provider.Message, len(conv))
	for i, m := range conv {
		msgs[i] = provider.Message{Role: m.Role, Content: m.Content}
	}
	cfg := p.cfg
	res, err := providerClient.Send(ctx, &cfg, msgs)
	if err != nil {
		return "", err
	}
	return res.Text, nil
}

// campaignScreener screens attacks with an endpoint of the current config.
type campaignScreener struct{ shared *sharedState }

func (s campaignScreener) Screen(ctx context.Context, endpoint string, conv []redteam.Message) (bool, string) {
	a := s.shared.current.Load()
	if a == nil {
		return true, string(scanner.Error)
	}
	ep, err := a.endpoint(endpoint)
	if err != nil {
		return true, string(scanner.Error)
	}
	c := &scanner.Conversation{Messages: make([]scanner.Message, len(conv))}
	for i, m := range conv {
		c.Messages[i] = scanner.Message{Role: scanner.Role(m.Role), Text: m.Content}
	}
	res := ep.pipeline.Screen(ctx, c, scanner.Input)
	return res.Outcome == scanner.Blocked, string(res.Outcome)
}

// ScreenAnswer screens a provider's answer with the endpoint's output
// scanners, as the gateway screens answers: the answer alone, not the
// conversation that prompted it.
func (s campaignScreener) ScreenAnswer(ctx context.Context, endpoint string, _ []redteam.Message, answer string) (bool, string) {
	ep, err := s.shared.current.Load().endpoint(endpoint)
	if err != nil {
		return true, string(scanner.Error)
	}
	c := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleAssistant, Text: answer}}}
	res := ep.pipeline.Screen(ctx, c, scanner.Output)
	return res.Outcome == scanner.Blocked, string(res.Outcome)
}

var _ redteam.AnswerScreener = campaignScreener{}

// orgFeatures reads redTeam.enabled from the store.
type orgFeatures struct{ st store.IdentityStore }

func (f orgFeatures) RedTeamEnabled(orgID string) (bool, error) {
	org, err := f.st.GetOrg(orgID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return org.Features.RedTeam.Enabled, nil
}

// providerClient calls providers for POST /prompts and campaigns.
var providerClient = &provider.Client{}

// parseCampaignBlock parses a campaign:
//
//	campaign <name> {
//	    providers     <provider name...>
//	    packs         <pack name...>
//	    converters    <converter...>
//	    system_prompt <text with {{canary}}>
//	    schedule      <cron expression or interval>
//	    targets       provider|endpoint:<name> ...
//	}
func parseCampaignBlock(d *caddyfile.Dispenser) (Campaign, error) {
	var c Campaign
	if !d.AllArgs(&c.Name) {
		return c, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := setOption(d, &c, seen); err != nil {
			return c, err
		}
	}
	return c, nil
}
