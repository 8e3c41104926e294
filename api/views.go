package api

import (
	"strconv"

	"github.com/promptwall/promptwall/store"
)

// The API's views of stored objects: each type is the spec's object with
// exactly its fields, and the function below it is the one conversion
// from the store's type, which adds what the spec does not serve (the org,
// routing fields, statistics) or names a field differently. A view whose
// wire shape is the store's is the store's type (ChatAccess).

// Prompt is a memory item of GET /backend/v1/prompts/{id}: exactly the
// spec's Prompt fields.
type Prompt struct {
	ID               string             `json:"id"`
	ExternalMetadata string             `json:"externalMetadata"`
	FromTemplate     bool               `json:"fromTemplate"`
	Input            string             `json:"input"`
	Memory           string             `json:"memory"`
	OrgID            string             `json:"orgId"`
	ParentID         string             `json:"parentId"`
	Preserve         bool               `json:"preserve"`
	ProjectID        string             `json:"projectId"`
	Provider         string             `json:"provider"`
	ReceivedAt       store.Timestamp    `json:"receivedAt"`
	Result           store.PromptResult `json:"result"`
	Type             string             `json:"type"`
	UserID           string             `json:"userId"`
}

func promptOf(p *store.Prompt, root string) Prompt {
	memory := p.Memory
	if memory == "" {
		// memory is the conversation's root id: the first prompt of its
		// parentId chain.
		memory = root
	}
	return Prompt{
		ID: p.ID, ExternalMetadata: p.ExternalMetadata, FromTemplate: p.FromTemplate, Input: p.Input,
		Memory: memory, OrgID: p.OrgID, ParentID: p.ParentID, Preserve: p.Preserve, ProjectID: p.ProjectID,
		Provider: p.Provider, ReceivedAt: p.ReceivedAt, Result: p.Result, Type: p.Type, UserID: p.UserID,
	}
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

// CampaignRun is the spec's CampaignRun, exactly its fields.
type CampaignRun struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	CampaignID string          `json:"campaignId"`
	ScheduleID string          `json:"scheduleId"`
	CreatedAt  store.Timestamp `json:"createdAt"`
	CreatedBy  string          `json:"createdBy"`
	StartAt    store.Timestamp `json:"startAt"`
	Status     string          `json:"status"`
	Progress   float64         `json:"progress"`
	Total      string          `json:"total"`
	CASIScore  string          `json:"CASIScore"`
	AttackRuns []AttackRun     `json:"attackRuns"`
}

// AttackRun is the spec's AttackRun.
type AttackRun struct {
	ID         string         `json:"id"`
	ProviderID string         `json:"providerId"`
	Progress   float64        `json:"progress"`
	Total      string         `json:"total"`
	ErrorCount int            `json:"errorCount"`
	Attack     Attack         `json:"attack"`
	Events     []AttackEvent  `json:"events"`
	Results    []AttackResult `json:"results"`
	// Target (extension) is "provider" or "endpoint:<name>": whether the
	// attacks went straight to the provider or through that endpoint.
	Target string `json:"target"`
}

// Attack is the spec's Attack.
type Attack struct {
	Pack       string   `json:"pack"`
	Severity   int      `json:"severity"`
	Technique  string   `json:"technique"`
	Vector     string   `json:"vector"`
	Converters []string `json:"converters"`
}

// AttackEvent is an item of AttackRun.events.
type AttackEvent struct {
	CreatedAt store.Timestamp `json:"createdAt"`
	Event     string          `json:"event"`
}

// AttackResult is the spec's AttackResult.
type AttackResult struct {
	Conversation      []store.ChatMessage `json:"conversation"`
	ConversationSteps int                 `json:"conversationSteps"`
	Converter         string              `json:"converter"`
	Error             string              `json:"error"`
	ErrorSummary      string              `json:"errorSummary"`
	Fingerprint       string              `json:"fingerprint"`
	Intent            string              `json:"intent"`
	IntentCategory    string              `json:"intentCategory"`
	Vulnerable        bool                `json:"vulnerable"`
	// Outcome (extension) is vulnerable, resisted, blocked (by the
	// endpoint, request or answer) or error.
	Outcome string `json:"outcome"`
}

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

func campaignRunOf(r *store.CampaignRun) CampaignRun {
	out := CampaignRun{
		ID: r.ID, Name: r.Name, CampaignID: r.CampaignID, ScheduleID: r.ScheduleID, CreatedAt: r.CreatedAt,
		CreatedBy: r.CreatedBy, StartAt: r.StartAt, Status: r.Status, Progress: r.Progress, Total: r.Total,
		CASIScore: r.CASIScore, AttackRuns: make([]AttackRun, 0, len(r.AttackRuns)),
	}
	if out.Total == "" {
		out.Total = "0"
	}
	for _, ar := range r.AttackRuns {
		out.AttackRuns = append(out.AttackRuns, attackRunOf(ar))
	}
	return out
}

// attackRunOf leaves out the campaign run's id, the attack run's index,
// statistics and score, and each event's reason: the spec's AttackRun has
// none of them.
func attackRunOf(ar *store.AttackRun) AttackRun {
	a := AttackRun{
		ID: ar.ID, ProviderID: ar.ProviderID, Progress: ar.Progress, Total: ar.Total, ErrorCount: ar.ErrorCount,
		Attack: Attack{Pack: ar.Attack.Pack, Severity: ar.Attack.Severity, Technique: ar.Attack.Technique,
			Vector: ar.Attack.Vector, Converters: nonNil(ar.Attack.Converters)},
		Events:  make([]AttackEvent, 0, len(ar.Events)),
		Results: make([]AttackResult, 0, len(ar.Results)),
		Target:  ar.Target,
	}
	if a.Total == "" {
		a.Total = "0"
	}
	for _, e := range ar.Events {
		a.Events = append(a.Events, AttackEvent{CreatedAt: e.CreatedAt, Event: e.Event})
	}
	for i := range ar.Results {
		a.Results = append(a.Results, attackResultOf(&ar.Results[i]))
	}
	return a
}

// attackResultOf leaves out whether an endpoint blocked the attempt and the
// judge's reason, which the spec's AttackResult does not carry.
func attackResultOf(res *store.AttackResult) AttackResult {
	conv := res.Conversation
	if conv == nil {
		conv = []store.ChatMessage{}
	}
	return AttackResult{
		Conversation: conv, ConversationSteps: res.ConversationSteps, Converter: res.Converter,
		Error: res.Error, ErrorSummary: res.ErrorSummary, Fingerprint: res.Fingerprint,
		Intent: res.Intent, IntentCategory: res.IntentCategory, Vulnerable: res.Vulnerable, Outcome: res.Outcome,
	}
}
