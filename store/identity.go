package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// Identity index buckets, created by Open with the others.
var (
	bOrgNames  = []byte("idx_org_names")  // lower(name) -> org id
	bOrgEmails = []byte("idx_org_emails") // org\x00lower(email) -> user id
	bTokenIDs  = []byte("idx_token_ids")  // token id -> sha256
)

// Roles: owners and admins see and manage their whole org, members their
// own records.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Permissions granted by the roles. They name what the API enforces, so a
// client can show or hide features without knowing the role rules.
const (
	// PermRecordsReadOwn: read one's own scans and prompts.
	PermRecordsReadOwn = "records:read:own"
	// PermRecordsReadOrg: read every record of the org (onlyUser=false).
	PermRecordsReadOrg = "records:read:org"
	// PermPromptsSend: send prompts through the API.
	PermPromptsSend = "prompts:send"
	// PermUsersRead: list the org's users.
	PermUsersRead = "users:read"
	// PermOrgRead: read the org's details and features.
	PermOrgRead = "org:read"
)

var rolePermissions = map[string][]string{
	RoleMember: {PermOrgRead, PermPromptsSend, PermRecordsReadOwn},
	RoleAdmin:  {PermOrgRead, PermPromptsSend, PermRecordsReadOrg, PermRecordsReadOwn, PermUsersRead},
	RoleOwner:  {PermOrgRead, PermPromptsSend, PermRecordsReadOrg, PermRecordsReadOwn, PermUsersRead},
}

// RolePermissions returns the permissions of a role (nil for an unknown
// one). The slice is a copy.
func RolePermissions(role string) []string {
	return slices.Clone(rolePermissions[role])
}

// roleNamespace derives role ids: a role id is a UUIDv5 of its org and
// name, so it is stable across restarts, identical in every copy of the
// database, and needs no migration for orgs created before roles had ids.
var roleNamespace = uuid.MustParse("6f1d7c8e-3b0a-4f57-9d0e-5a2c4b8e71d3")

// RoleID returns the id of role in org.
func RoleID(orgID, role string) string {
	return uuid.NewSHA1(roleNamespace, []byte(orgID+"\x00"+role)).String()
}

// Role is one of the three roles of an org.
type Role struct {
	ID          string   `json:"id"`
	OrgID       string   `json:"orgId"`
	Name        string   `json:"name"`
	Permissions []string `json:"permissions"`
}

// OrgRoles returns the roles of an org: owner, admin, member.
func OrgRoles(orgID string) []Role {
	out := make([]Role, 0, 3)
	for _, n := range []string{RoleOwner, RoleAdmin, RoleMember} {
		out = append(out, Role{ID: RoleID(orgID, n), OrgID: orgID, Name: n, Permissions: RolePermissions(n)})
	}
	return out
}

// Features are an org's feature flags, as the API's Organization.features.
type Features struct {
	BlueTeam BlueTeam `json:"blueTeam"`
	RedTeam  RedTeam  `json:"redTeam"`
}

// BlueTeam gates screening features.
type BlueTeam struct {
	Enabled        bool           `json:"enabled"`
	LegacyScanners bool           `json:"legacyScanners"`
	CustomScanners CustomScanners `json:"customScanners"`
}

// CustomScanners caps the org's concurrent custom and vendored
// (third-party HTTP) scanners.
type CustomScanners struct {
	Enabled               bool `json:"enabled"`
	MaxConcurrentCustom   int  `json:"maxConcurrentCustom"`
	MaxConcurrentVendored int  `json:"maxConcurrentVendored"`
}

// RedTeam gates red-team campaigns.
type RedTeam struct {
	Enabled bool `json:"enabled"`
}

// DefaultFeatures are the features of an org created without any: blue
// team on with custom scanners capped at 8 concurrent calls each; red team
// off, because campaigns send attack traffic (billed by the provider) and
// should be switched on deliberately.
func DefaultFeatures() Features {
	return Features{
		BlueTeam: BlueTeam{Enabled: true, CustomScanners: CustomScanners{Enabled: true, MaxConcurrentCustom: 8, MaxConcurrentVendored: 8}},
	}
}

// Org is an organization: the unit of tenancy. Nobody sees another org's
// records.
type Org struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// OwnerRoleID, AdminRoleID and MemberRoleID are set by the store to
	// RoleID(ID, role) on every write; values given by the caller are
	// ignored.
	OwnerRoleID  string `json:"ownerRoleId"`
	AdminRoleID  string `json:"adminRoleId"`
	MemberRoleID string `json:"memberRoleId"`
	// ApplicationURL is where the org's users reach Promptwall.
	ApplicationURL string `json:"applicationUrl"`
	// Disabled orgs cannot authenticate.
	Disabled bool `json:"disabled"`
	// HasOwner is computed when the org is read: whether it has an
	// unblocked owner. It is not stored.
	HasOwner bool `json:"-"`
	// RequireMFA is recorded for clients and identity providers in front
	// of Promptwall; Promptwall's own credentials are bearer tokens.
	RequireMFA bool `json:"requireMfa"`
	// Entitlements is free text describing the org's plan.
	Entitlements string    `json:"entitlements"`
	Features     Features  `json:"features"`
	CreatedAt    Timestamp `json:"createdAt"`
}

// User belongs to exactly one org.
type User struct {
	ID    string `json:"id"`
	OrgID string `json:"orgId"`
	Name  string `json:"name"`
	// Email is unique within the org, compared case-insensitively; it may
	// be empty for users written with PutUser (service accounts).
	Email string `json:"email"`
	// Role is RoleOwner, RoleAdmin or RoleMember.
	Role string `json:"role"`
	// Blocked users cannot authenticate.
	Blocked bool `json:"blocked"`
	// Verified: the e-mail address is known to belong to the user (users
	// declared in config or added by an operator are).
	Verified bool `json:"verified"`
	// Social: the user signs in through a social identity provider.
	Social               bool      `json:"social"`
	CreatedAt            Timestamp `json:"createdAt"`
	LastInvitationSentAt Timestamp `json:"lastInvitationSentAt"`
	// Teams the user belongs to, by name.
	Teams []string `json:"teams,omitempty"`
	// Projects the user is a member of, by project id.
	Projects []string `json:"projects,omitempty"`
	// GroupIDs are the user's groups (directory groups).
	GroupIDs []string `json:"groupIds,omitempty"`
}

// RoleID returns the id of the user's role.
func (u *User) RoleID() string { return RoleID(u.OrgID, u.Role) }

// Permissions returns the permissions of the user's role.
func (u *User) Permissions() []string { return RolePermissions(u.Role) }

func stamp(t *Timestamp) {
	if t.IsZero() {
		*t = Timestamp(time.Now().UTC().Truncate(time.Millisecond))
	}
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidRecord}, args...)...)
}

func getJSON(b *bolt.Bucket, key []byte, v any, what string) error {
	raw := b.Get(key)
	if raw == nil {
		return fmt.Errorf("%w: %s %q", ErrNotFound, what, key)
	}
	// Unmarshal copies out of bbolt's memory.
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("store: decode %s: %w", what, err)
	}
	return nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// nameKey folds a name or e-mail for the uniqueness indexes.
func nameKey(s string) []byte { return []byte(FoldName(s)) }

func validateOrg(o *Org, nameRequired bool) error {
	if err := validateKeyPart("org id", o.ID, true); err != nil {
		return err
	}
	if strings.ContainsRune(o.ID, 0) {
		return invalid("org id contains NUL")
	}
	if nameRequired && strings.TrimSpace(o.Name) == "" {
		return invalid("org name is required")
	}
	if err := validateKeyPart("org name", o.Name, false); err != nil {
		return err
	}
	if c := o.Features.BlueTeam.CustomScanners; c.MaxConcurrentCustom < 0 || c.MaxConcurrentVendored < 0 {
		return invalid("custom scanner caps must not be negative")
	}
	return nil
}

// writeOrg stores o in tx, keeping the name index.
func writeOrg(tx *bolt.Tx, o *Org, mode WriteMode) error {
	orgs, names := tx.Bucket(bOrgs), tx.Bucket(bOrgNames)
	var old *Org
	if err := getJSON(orgs, []byte(o.ID), &old, "org"); err != nil && !isNotFound(err) {
		return err
	}
	if err := MergeOrg(o, old, mode); err != nil {
		return err
	}
	if o.Name != "" {
		if id := names.Get(nameKey(o.Name)); id != nil && string(id) != o.ID {
			return OrgNameTaken(o.Name)
		}
	}
	if old != nil && old.Name != "" && !bytesEqual(nameKey(old.Name), nameKey(o.Name)) {
		if err := names.Delete(nameKey(old.Name)); err != nil {
			return err
		}
	}
	if o.Name != "" {
		if err := names.Put(nameKey(o.Name), []byte(o.ID)); err != nil {
			return err
		}
	}
	return putJSON(orgs, []byte(o.ID), o)
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// PutOrg creates or replaces an org. A zero CreatedAt keeps the stored one
// or is set to now; a new org with zero Features takes DefaultFeatures. The
// name, when set, must not be another org's.
func (s *Store) PutOrg(o *Org) error {
	if err := CheckOrg(o, WritePut); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return writeOrg(tx, o, WritePut) })
}

// CreateOrg creates a new org. An empty ID is set to a new UUIDv7; the
// name is required and unique (case-insensitively); a zero Features takes
// DefaultFeatures. ErrConflict if the id or the name is taken.
func (s *Store) CreateOrg(o *Org) error {
	if err := CheckOrg(o, WriteCreate); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return writeOrg(tx, o, WriteCreate) })
}

// UpdateOrg replaces an existing org (ErrNotFound otherwise), keeping its
// CreatedAt when o's is zero. The name is required and unique.
func (s *Store) UpdateOrg(o *Org) error {
	if err := CheckOrg(o, WriteUpdate); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return writeOrg(tx, o, WriteUpdate) })
}

// readOrg decodes an org and computes HasOwner from its users.
func readOrg(tx *bolt.Tx, id []byte) (*Org, error) {
	o := new(Org)
	if err := getJSON(tx.Bucket(bOrgs), id, o, "org"); err != nil {
		return nil, err
	}
	// Role ids of orgs stored before they were recorded.
	setRoleIDs(o)
	users := tx.Bucket(bUsers)
	prefix := []byte(o.ID + "\x00")
	c := tx.Bucket(bOrgUsers).Cursor()
	for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
		var u User
		if err := getJSON(users, k[len(prefix):], &u, "user"); err != nil {
			continue
		}
		if u.Role == RoleOwner && !u.Blocked {
			o.HasOwner = true
			break
		}
	}
	return o, nil
}

// GetOrg returns the org with that id, or ErrNotFound.
func (s *Store) GetOrg(id string) (*Org, error) {
	var o *Org
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		o, err = readOrg(tx, []byte(id))
		return err
	})
	return o, err
}

// GetOrgByName returns the org with that name (compared
// case-insensitively), or ErrNotFound.
func (s *Store) GetOrgByName(name string) (*Org, error) {
	var o *Org
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bOrgNames).Get(nameKey(name))
		if id == nil {
			return fmt.Errorf("%w: org named %q", ErrNotFound, name)
		}
		var err error
		o, err = readOrg(tx, id)
		return err
	})
	return o, err
}

// ListOrgs returns every org, ordered by id.
func (s *Store) ListOrgs() ([]*Org, error) {
	var out []*Org
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bOrgs).ForEach(func(k, _ []byte) error {
			o, err := readOrg(tx, k)
			if err != nil {
				return err
			}
			out = append(out, o)
			return nil
		})
	})
	return out, err
}

func validateUser(u *User) error {
	if err := validateKeyPart("user id", u.ID, true); err != nil {
		return err
	}
	if strings.ContainsRune(u.ID, 0) {
		return invalid("user id contains NUL")
	}
	switch u.Role {
	case RoleOwner, RoleAdmin, RoleMember:
	default:
		return invalid("role %q is not owner, admin or member", u.Role)
	}
	if u.Email != "" {
		if err := validateEmail(u.Email); err != nil {
			return err
		}
	}
	return validateKeyPart("user name", u.Name, false)
}

// validateEmail is a shape check, not RFC 5322: one @ with text on both
// sides, no spaces, at most 254 bytes (RFC 5321's path limit).
func validateEmail(e string) error {
	local, domain, ok := strings.Cut(e, "@")
	if !ok || local == "" || domain == "" || strings.ContainsAny(e, " \t\r\n\x00") || strings.Contains(domain, "@") || len(e) > 254 {
		return invalid("e-mail %q is not an address", e)
	}
	return nil
}

func emailKey(orgID, email string) []byte {
	return append([]byte(orgID+"\x00"), nameKey(email)...)
}

// writeUser stores u in tx, keeping the org membership and e-mail indexes.
func writeUser(tx *bolt.Tx, u *User, mode WriteMode) error {
	if tx.Bucket(bOrgs).Get([]byte(u.OrgID)) == nil {
		return UserOrgMissing(u)
	}
	users, orgUsers, emails := tx.Bucket(bUsers), tx.Bucket(bOrgUsers), tx.Bucket(bOrgEmails)
	var old *User
	if err := getJSON(users, []byte(u.ID), &old, "user"); err != nil && !isNotFound(err) {
		return err
	}
	if err := MergeUser(u, old, mode); err != nil {
		return err
	}
	if u.Email != "" {
		if id := emails.Get(emailKey(u.OrgID, u.Email)); id != nil && string(id) != u.ID {
			return EmailTaken(u)
		}
	}
	if old != nil {
		if old.OrgID != u.OrgID {
			if err := orgUsers.Delete([]byte(old.OrgID + "\x00" + old.ID)); err != nil {
				return err
			}
		}
		if old.Email != "" && !bytesEqual(emailKey(old.OrgID, old.Email), emailKey(u.OrgID, u.Email)) {
			if err := emails.Delete(emailKey(old.OrgID, old.Email)); err != nil {
				return err
			}
		}
	}
	if u.Email != "" {
		if err := emails.Put(emailKey(u.OrgID, u.Email), []byte(u.ID)); err != nil {
			return err
		}
	}
	if err := orgUsers.Put([]byte(u.OrgID+"\x00"+u.ID), nil); err != nil {
		return err
	}
	return putJSON(users, []byte(u.ID), u)
}

// PutUser creates or replaces a user. The org must exist, the role be one
// of the three roles, and the e-mail, when set, not be another user's in
// the org. A zero CreatedAt keeps the stored one or is set to now.
func (s *Store) PutUser(u *User) error {
	if err := CheckUser(u, WritePut); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return writeUser(tx, u, WritePut) })
}

// CreateUser creates a new user. An empty ID is set to a new UUIDv7 (so
// ListUsers returns users newest first); the e-mail is required.
// ErrConflict if the id or the e-mail (in the org) is taken.
func (s *Store) CreateUser(u *User) error {
	if err := CheckUser(u, WriteCreate); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return writeUser(tx, u, WriteCreate) })
}

// GetUser returns the user with that id, or ErrNotFound.
func (s *Store) GetUser(id string) (*User, error) {
	u := new(User)
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bUsers), []byte(id), u, "user")
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// GetUserByEmail returns the user of org with that e-mail (compared
// case-insensitively), or ErrNotFound.
func (s *Store) GetUserByEmail(orgID, email string) (*User, error) {
	u := new(User)
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bOrgEmails).Get(emailKey(orgID, email))
		if id == nil {
			return fmt.Errorf("%w: user %q in org %q", ErrNotFound, email, orgID)
		}
		return getJSON(tx.Bucket(bUsers), id, u, "user")
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// BlockUser blocks (or unblocks) a user. A blocked user's tokens stop
// authenticating at once and work again when unblocked; revoke them to end
// them for good.
func (s *Store) BlockUser(id string, blocked bool) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		users := tx.Bucket(bUsers)
		var u User
		if err := getJSON(users, []byte(id), &u, "user"); err != nil {
			return err
		}
		u.Blocked = blocked
		return putJSON(users, []byte(id), &u)
	})
}
