// Package identity is identity as code: the organizations and users an
// operator declares in the config, checked without a store (Validate) and
// written into one (Apply) when the Caddy app provisions. It knows nothing
// of Caddy.
package identity

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/promptwall/promptwall/store"
)

// Org is an organization declared in the Caddy config. Declared
// fields are the truth: applying the config sets them. Orgs and users that
// the config does not mention are left alone, and nothing is ever deleted.
type Org struct {
	// Name identifies the org; an org of that name (compared
	// case-insensitively) is updated, otherwise one is created.
	Name string `json:"name"`
	// ApplicationURL is where the org's users reach Promptwall.
	ApplicationURL string `json:"application_url,omitempty"`
	// RequireMFA is reported to clients. Default: false.
	RequireMFA bool `json:"require_mfa,omitempty"`
	// Entitlements is free text describing the org's plan.
	Entitlements string `json:"entitlements,omitempty"`
	// Disabled orgs cannot authenticate. Default: false.
	Disabled bool `json:"disabled,omitempty"`
	// Features overrides the feature flags it sets; unset flags keep their
	// stored value, or store.DefaultFeatures for a new org.
	Features *Features `json:"features,omitempty"`
	// Users of the org, matched by e-mail.
	Users []User `json:"users,omitempty"`
}

// Features are feature flags; nil fields are not declared.
type Features struct {
	BlueTeam              *bool `json:"blue_team,omitempty"`
	LegacyScanners        *bool `json:"legacy_scanners,omitempty"`
	CustomScanners        *bool `json:"custom_scanners,omitempty"`
	MaxConcurrentCustom   *int  `json:"max_concurrent_custom,omitempty"`
	MaxConcurrentVendored *int  `json:"max_concurrent_vendored,omitempty"`
	RedTeam               *bool `json:"red_team,omitempty"`
}

// User is a user declared in the config.
type User struct {
	// Email identifies the user within the org (case-insensitively).
	Email string `json:"email"`
	// Name is the display name; empty keeps the stored one.
	Name string `json:"name,omitempty"`
	// Role is owner, admin or member. Default: member.
	Role string `json:"role,omitempty"`
	// Projects, GroupIDs and Teams replace the stored ones when set.
	Projects []string `json:"projects,omitempty"`
	GroupIDs []string `json:"group_ids,omitempty"`
	Teams    []string `json:"teams,omitempty"`
}

func (f *Features) apply(to *store.Features) {
	if f == nil {
		return
	}
	set := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	set(&to.BlueTeam.Enabled, f.BlueTeam)
	set(&to.BlueTeam.LegacyScanners, f.LegacyScanners)
	set(&to.BlueTeam.CustomScanners.Enabled, f.CustomScanners)
	set(&to.RedTeam.Enabled, f.RedTeam)
	if f.MaxConcurrentCustom != nil {
		to.BlueTeam.CustomScanners.MaxConcurrentCustom = *f.MaxConcurrentCustom
	}
	if f.MaxConcurrentVendored != nil {
		to.BlueTeam.CustomScanners.MaxConcurrentVendored = *f.MaxConcurrentVendored
	}
}

// Validate checks declared orgs without a store: names and e-mails present
// and unique, roles known, caps not negative. The Caddy app calls it from
// Validate so a bad config is refused before anything is written.
func Validate(orgs []Org) error {
	seen := make(map[string]bool)
	for i, o := range orgs {
		name := strings.ToLower(strings.TrimSpace(o.Name))
		if name == "" {
			return fmt.Errorf("organization %d: name is required", i)
		}
		if seen[name] {
			return fmt.Errorf("organization %q is declared twice", o.Name)
		}
		seen[name] = true
		if f := o.Features; f != nil && ((f.MaxConcurrentCustom != nil && *f.MaxConcurrentCustom < 0) ||
			(f.MaxConcurrentVendored != nil && *f.MaxConcurrentVendored < 0)) {
			return fmt.Errorf("organization %q: custom scanner caps must not be negative", o.Name)
		}
		emails := make(map[string]bool)
		for _, u := range o.Users {
			e := strings.ToLower(strings.TrimSpace(u.Email))
			if e == "" || !strings.Contains(e, "@") {
				return fmt.Errorf("organization %q: user %q: a valid e-mail is required", o.Name, u.Email)
			}
			if emails[e] {
				return fmt.Errorf("organization %q: user %q is declared twice", o.Name, u.Email)
			}
			emails[e] = true
			switch u.Role {
			case "", store.RoleOwner, store.RoleAdmin, store.RoleMember:
			default:
				return fmt.Errorf("organization %q: user %q: role %q is not owner, admin or member", o.Name, u.Email, u.Role)
			}
		}
	}
	return nil
}

// Apply upserts the declared orgs (by name) and their users (by
// e-mail). It is idempotent and writes only what differs, so applying the
// same config on every reload costs reads. It never deletes and never
// unblocks: a user blocked with `caddy promptwall user block` stays
// blocked though the config still declares them.
func Apply(st store.IdentityStore, orgs []Org) error {
	if err := Validate(orgs); err != nil {
		return err
	}
	for _, d := range orgs {
		org, err := applyOrg(st, d)
		if err != nil {
			return fmt.Errorf("organization %q: %w", d.Name, err)
		}
		for _, du := range d.Users {
			if err := applyUser(st, org.ID, du); err != nil {
				return fmt.Errorf("organization %q: user %q: %w", d.Name, du.Email, err)
			}
		}
	}
	return nil
}

func applyOrg(st store.IdentityStore, d Org) (*store.Org, error) {
	cur, err := st.GetOrgByName(d.Name)
	if errors.Is(err, store.ErrNotFound) {
		o := &store.Org{Name: strings.TrimSpace(d.Name), ApplicationURL: d.ApplicationURL, RequireMFA: d.RequireMFA,
			Entitlements: d.Entitlements, Disabled: d.Disabled, Features: store.DefaultFeatures()}
		d.Features.apply(&o.Features)
		return o, st.CreateOrg(o)
	}
	if err != nil {
		return nil, err
	}
	want := *cur
	// The stored name's spelling is kept: the config matched it.
	want.ApplicationURL, want.RequireMFA, want.Entitlements, want.Disabled = d.ApplicationURL, d.RequireMFA, d.Entitlements, d.Disabled
	d.Features.apply(&want.Features)
	if want == *cur {
		return cur, nil
	}
	return &want, st.UpdateOrg(&want)
}

func applyUser(st store.IdentityStore, orgID string, d User) error {
	role := d.Role
	if role == "" {
		role = store.RoleMember
	}
	cur, err := st.GetUserByEmail(orgID, d.Email)
	if errors.Is(err, store.ErrNotFound) {
		// Declared by the operator, so the address is taken as verified.
		return st.CreateUser(&store.User{OrgID: orgID, Email: strings.TrimSpace(d.Email), Name: d.Name, Role: role,
			Verified: true, Projects: d.Projects, GroupIDs: d.GroupIDs, Teams: d.Teams})
	}
	if err != nil {
		return err
	}
	want := *cur
	want.Role = role
	if d.Name != "" {
		want.Name = d.Name
	}
	if d.Projects != nil {
		want.Projects = d.Projects
	}
	if d.GroupIDs != nil {
		want.GroupIDs = d.GroupIDs
	}
	if d.Teams != nil {
		want.Teams = d.Teams
	}
	if want.Role == cur.Role && want.Name == cur.Name && slices.Equal(want.Projects, cur.Projects) &&
		slices.Equal(want.GroupIDs, cur.GroupIDs) && slices.Equal(want.Teams, cur.Teams) {
		return nil
	}
	return st.PutUser(&want)
}
