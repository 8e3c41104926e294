package store

import (
	"context"
	"time"
)

// Backend is everything the gateway, the API, the CLI and the red-team
// runner use of a store. *Store (bbolt, the default) implements all of it;
// other engines implement it to let several gateway instances share one
// database. The parts are separate interfaces so that a caller can ask for
// only what it uses.
type Backend interface {
	RecordStore
	IdentityStore
	ChatStore
	TemplateStore
	CampaignStore
	ProviderStore
	// Close drains queued records and releases the engine.
	Close() error
}

// RecordStore holds the screened records.
type RecordStore interface {
	// Reserve takes queue capacity for one record before the request is
	// forwarded, so that a store that cannot keep up refuses the request
	// (ErrQueueFull) instead of losing its record.
	Reserve(ctx context.Context) (*Reservation, error)
	// Put is Reserve followed by Commit.
	Put(ctx context.Context, p *Prompt) error
	// Sync waits until every record committed before the call is durable
	// and visible to reads: read-your-writes for the caller.
	Sync(ctx context.Context) error
	// QueueDepth counts the records reserved, queued or being written.
	QueueDepth() int
	ListPrompts(q Query) (Page, error)
	GetPrompt(id string) (*Prompt, error)
	Chain(id string) ([]*Prompt, error)
}

// IdentityStore holds organizations, users and API tokens (as hashes).
type IdentityStore interface {
	PutOrg(o *Org) error
	CreateOrg(o *Org) error
	UpdateOrg(o *Org) error
	GetOrg(id string) (*Org, error)
	GetOrgByName(name string) (*Org, error)
	ListOrgs() ([]*Org, error)
	PutUser(u *User) error
	CreateUser(u *User) error
	GetUser(id string) (*User, error)
	GetUserByEmail(orgID, email string) (*User, error)
	BlockUser(id string, blocked bool) error
	ListUsers(q UserQuery) (UserPage, error)
	PutToken(t *Token) error
	CreateToken(userID, name string) (string, *Token, error)
	LookupToken(hash [32]byte) (*Token, error)
	TouchToken(hash [32]byte, at time.Time) error
	ListTokens(userID string) ([]*Token, error)
	RevokeToken(idOrToken string) error
	DeleteToken(hash [32]byte) error
}

// ChatStore holds chats and the prompts sent in them.
type ChatStore interface {
	CreateChat(c *Chat) error
	GetChat(id string) (*Chat, error)
	UpdateChat(id string, fn func(*Chat) error) (*Chat, error)
	AddChatPrompt(chatID, promptID string) error
	ChatPrompts(chatID string) ([]*Prompt, error)
}

// TemplateStore holds prompt templates and the prompts built from them.
type TemplateStore interface {
	CreatePromptTemplate(t *PromptTemplate) error
	GetPromptTemplate(id string) (*PromptTemplate, error)
	AddTemplatePrompt(templateID, promptID string) error
	TemplatePrompts(templateID string) ([]*Prompt, error)
}

// CampaignStore holds red-team campaigns, schedules, runs and results.
type CampaignStore interface {
	PutCampaign(c *Campaign) error
	GetCampaign(id string) (*Campaign, error)
	ListCampaigns(orgID string) ([]*Campaign, error)
	DeleteCampaign(id string) error
	PutCampaignSchedule(sc *CampaignSchedule) error
	GetCampaignSchedule(id string) (*CampaignSchedule, error)
	ListCampaignSchedules(orgID string) ([]*CampaignSchedule, error)
	CreateCampaignRun(r *CampaignRun) error
	SaveCampaignRun(r *CampaignRun, ars ...*AttackRun) error
	GetCampaignRun(id string, withResults bool) (*CampaignRun, error)
	CampaignRunsWithStatus(statuses ...string) ([]*CampaignRun, error)
	ListCampaignRuns(q CampaignRunQuery) (CampaignRunPage, error)
}

// ProviderStore holds the versions of each org's provider configuration.
type ProviderStore interface {
	PutProviderVersion(p *ProviderRecord) error
	SyncProviders(orgID string, current []*ProviderRecord, at time.Time) error
	ListProviders(q ProviderQuery) (ProviderPage, error)
}

var _ Backend = (*Store)(nil)
