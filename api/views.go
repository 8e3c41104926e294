package api

import (
	"strconv"

	"github.com/promptwall/promptwall/store"
)

// The API's views of stored objects. Where the store keeps the spec's
// object whole, in a struct its own type embeds (PromptFields, ChatFields
// and the like), the view is that struct, and its function only changes
// what the spec wants otherwise: a default, [] for nil. The views declared
// here differ from anything stored: a subset with another result (Scan),
// computed fields (User, Role), keys in another order than the stored
// record's (Organization), or items whose stored type carries more
// (CampaignRun, AttackRun).

// Prompt is a memory item of GET /backend/v1/prompts/{id}: the stored
// record's spec fields.
type Prompt = store.PromptFields

func promptOf(p *store.Prompt, root string) Prompt {
	out := p.PromptFields
	if out.Memory == "" {
		// memory is the conversation's root id: the first prompt of its
		// parentId chain.
		out.Memory = root
	}
	return out
}

// Scan is an item of GET /backend/v1/scans: exactly the spec's fields.
type Scan struct {
	ID               string          `json:"id"`
	ExternalMetadata string          `json:"externalMetadata"`
	Input            string          `json:"input"`
	Preserve         bool            `json:"preserve"`
	ProjectID        string          `json:"projectId"`
	ReceivedAt       store.Timestamp `json:"receivedAt"`
	Result           ScanResult      `json:"result"`
	Type             string          `json:"type"`
	UserID           string          `json:"userId"`
}

// ScanResult is Scan.result.
type ScanResult struct {
	Outcome        string                `json:"outcome"`
	ScannerResults []store.ScannerResult `json:"scannerResults"`
}

func scanOf(p *store.Prompt) Scan {
	sr := p.Result.ScannerResults
	if sr == nil {
		sr = []store.ScannerResult{}
	}
	return Scan{
		ID: p.ID, ExternalMetadata: p.ExternalMetadata, Input: p.Input, Preserve: p.Preserve,
		ProjectID: p.ProjectID, ReceivedAt: p.ReceivedAt, Type: p.Type, UserID: p.UserID,
		Result: ScanResult{Outcome: p.Result.Outcome, ScannerResults: sr},
	}
}

// Chat is the spec's Chat: the store's chat without its org.
type Chat = store.ChatFields

// ChatAccess is Chat.access, served as stored: its wire shape is the
// spec's.
type ChatAccess = store.ChatAccess

// chatOf is the one conversion of a stored chat to the spec's: the org is
// left out, and users is an array even when empty.
func chatOf(c *store.Chat) Chat {
	out := c.ChatFields
	if out.Access.Users == nil {
		out.Access.Users = []string{}
	}
	return out
}

// PromptTemplate is the spec's PromptTemplate: the store's template
// without its org.
type PromptTemplate = store.PromptTemplateFields

// User is an item of GET /backend/v1/users: exactly the spec's fields.
type User struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	// Admin is "true" for owners and admins, "false" for members: the spec
	// carries it as a string.
	Admin                string          `json:"admin"`
	Blocked              bool            `json:"blocked"`
	Verified             bool            `json:"verified"`
	Social               bool            `json:"social"`
	CreatedAt            store.Timestamp `json:"createdAt"`
	LastInvitationSentAt store.Timestamp `json:"lastInvitationSentAt"`
	// Org is the id of the user's organization.
	Org         string   `json:"org"`
	Permissions []string `json:"permissions"`
	RoleIDs     []string `json:"roleIds"`
	// Roles are the names of the user's roles (owner, admin or member).
	Roles []string `json:"roles"`
	Teams []string `json:"teams"`
}

// Role is a value of UserList.roles: the spec leaves its shape open.
type Role struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Org         string   `json:"org"`
	Permissions []string `json:"permissions"`
}

func userOf(u *store.User) User {
	teams := u.Teams
	if teams == nil {
		teams = []string{}
	}
	return User{
		ID: u.ID, Name: u.Name, Email: u.Email, Admin: strconv.FormatBool(u.Role == store.RoleOwner || u.Role == store.RoleAdmin),
		Blocked: u.Blocked, Verified: u.Verified, Social: u.Social, CreatedAt: u.CreatedAt,
		LastInvitationSentAt: u.LastInvitationSentAt, Org: u.OrgID, Permissions: u.Permissions(),
		RoleIDs: []string{u.RoleID()}, Roles: []string{u.Role}, Teams: teams,
	}
}

// roleOf is the role of a user, as GET /users?includeRoles=true serves it.
func roleOf(u *store.User) Role {
	return Role{ID: u.RoleID(), Name: u.Role, Org: u.OrgID, Permissions: u.Permissions()}
}

// Organization is an item of GET /backend/v1/orgs: exactly the spec's
// fields.
type Organization struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	AdminRoleID    string         `json:"adminRoleId"`
	OwnerRoleID    string         `json:"ownerRoleId"`
	ApplicationURL string         `json:"applicationUrl"`
	Disabled       bool           `json:"disabled"`
	HasOwner       bool           `json:"hasOwner"`
	RequireMFA     bool           `json:"requireMfa"`
	Entitlements   string         `json:"entitlements"`
	Features       store.Features `json:"features"`
}

func orgOf(o *store.Org) Organization {
	return Organization{
		ID: o.ID, Name: o.Name, AdminRoleID: o.AdminRoleID, OwnerRoleID: o.OwnerRoleID, ApplicationURL: o.ApplicationURL,
		Disabled: o.Disabled, HasOwner: o.HasOwner, RequireMFA: o.RequireMFA, Entitlements: o.Entitlements, Features: o.Features,
	}
}

// CampaignRun is the spec's CampaignRun: the stored run's spec fields,
// and its attack runs as the spec shows them.
type CampaignRun struct {
	store.CampaignRunFields
	AttackRuns []AttackRun `json:"attackRuns"`
}

// AttackRun is the spec's AttackRun: the stored attack run's spec fields,
// and its attack, events and results as the spec shows them.
type AttackRun struct {
	store.AttackRunFields
	Attack  Attack         `json:"attack"`
	Events  []AttackEvent  `json:"events"`
	Results []AttackResult `json:"results"`
	// Target (extension) is "provider" or "endpoint:<name>": whether the
	// attacks went straight to the provider or through that endpoint.
	Target string `json:"target"`
}

// Attack is the spec's Attack: the stored attack without its id.
type Attack = store.AttackFields

// AttackEvent is an item of AttackRun.events: the stored event without
// its reason.
type AttackEvent = store.AttackEvent

// AttackResult is the spec's AttackResult with its outcome extension: the
// stored attempt without whether an endpoint blocked it and the judge's
// reason.
type AttackResult = store.AttackResultFields

// campaignView is a campaign in the campaigns map. The system prompt is
// left out: it is the campaign's test fixture, not something every
// member of the org needs to read.
type campaignView struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Providers  []string        `json:"providers"`
	Packs      []string        `json:"packs"`
	Converters []string        `json:"converters"`
	Schedule   string          `json:"schedule"`
	Targets    []string        `json:"targets"`
	CreatedAt  store.Timestamp `json:"createdAt"`
	UpdatedAt  store.Timestamp `json:"updatedAt"`
}

func campaignViewOf(c *store.Campaign) campaignView {
	return campaignView{ID: c.ID, Name: c.Name, Providers: nonNil(c.Providers),
		Packs: nonNil(c.Packs), Converters: nonNil(c.Converters), Schedule: c.Schedule,
		Targets: nonNil(c.Targets), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// campaignRunOf leaves out the run's org, extensions and statistics, and
// serves total as "0" until the run is planned.
func campaignRunOf(r *store.CampaignRun) CampaignRun {
	out := CampaignRun{CampaignRunFields: r.CampaignRunFields, AttackRuns: make([]AttackRun, 0, len(r.AttackRuns))}
	if out.Total == "" {
		out.Total = "0"
	}
	for _, ar := range r.AttackRuns {
		out.AttackRuns = append(out.AttackRuns, attackRunOf(ar))
	}
	return out
}

// attackRunOf leaves out the campaign run's id, the attack run's index,
// statistics and score, the attack's id and each event's reason: the
// spec's AttackRun has none of them.
func attackRunOf(ar *store.AttackRun) AttackRun {
	a := AttackRun{
		AttackRunFields: ar.AttackRunFields,
		Attack:          ar.Attack.AttackFields,
		Events:          make([]AttackEvent, 0, len(ar.Events)),
		Results:         make([]AttackResult, 0, len(ar.Results)),
		Target:          ar.Target,
	}
	a.Attack.Converters = nonNil(a.Attack.Converters)
	if a.Total == "" {
		a.Total = "0"
	}
	for _, e := range ar.Events {
		a.Events = append(a.Events, e.AttackEvent)
	}
	for i := range ar.Results {
		res := ar.Results[i].AttackResultFields
		if res.Conversation == nil {
			res.Conversation = []store.ChatMessage{}
		}
		a.Results = append(a.Results, res)
	}
	return a
}
