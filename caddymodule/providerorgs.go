package caddymodule

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/admin"
	"github.com/promptwall/promptwall/store"
)

// providerServes reports whether the org may use the provider: the default
// organization owns every declared provider, other orgs use those whose
// orgs list names them.
func (a *App) providerServes(p *configuredProvider, orgID string) bool {
	if orgID == defaultOrgID() {
		return true
	}
	if len(p.cfg.Orgs) == 0 {
		return false
	}
	org, err := a.shared.store.GetOrg(orgID)
	return err == nil && slices.Contains(p.cfg.Orgs, org.Name)
}

// syncOrgProviders stores, for the default organization and for every org
// a provider names, the versions of the providers that org may use, so
// each org's GET /providers (configAt included) lists its own.
func (a *App) syncOrgProviders(at time.Time) error {
	// Every org is synced, so one a provider stopped naming sees it go.
	orgs, err := a.shared.store.ListOrgs()
	if err != nil {
		return err
	}
	byOrg := map[string][]*store.ProviderRecord{defaultOrgID(): nil}
	for _, o := range orgs {
		byOrg[o.ID] = nil
	}
	for _, p := range a.providers {
		orgIDs := []string{defaultOrgID()}
		for _, name := range p.cfg.Orgs {
			org, err := a.shared.store.GetOrgByName(name)
			if errors.Is(err, store.ErrNotFound) {
				a.logger.Warn("provider names an organization that does not exist", zap.String("provider", p.cfg.Name), zap.String("org", name))
				continue
			}
			if err != nil {
				return fmt.Errorf("provider %q: organization %q: %w", p.cfg.Name, name, err)
			}
			orgIDs = append(orgIDs, org.ID)
		}
		for _, id := range orgIDs {
			rec, err := admin.ProviderRecord(id, &p.cfg)
			if err != nil {
				return err
			}
			byOrg[id] = append(byOrg[id], rec)
		}
	}
	for id, recs := range byOrg {
		if err := a.shared.store.SyncProviders(id, recs, at); err != nil {
			return err
		}
	}
	return nil
}
