package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Roles of DECISIONS section 6.
const (
	RoleOwner  = "owner"
	RoleAdmin  = "admin"
	RoleMember = "member"
)

// Org is an organization: the unit of tenancy. Nobody sees another org's
// records.
type Org struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt Timestamp `json:"createdAt"`
}

// User belongs to exactly one org.
type User struct {
	ID    string `json:"id"`
	OrgID string `json:"orgId"`
	Name  string `json:"name"`
	Email string `json:"email"`
	// Role is RoleOwner, RoleAdmin or RoleMember.
	Role string `json:"role"`
	// Blocked users cannot authenticate.
	Blocked   bool      `json:"blocked"`
	CreatedAt Timestamp `json:"createdAt"`
}

// Token is an API token, known to the store only by its SHA-256.
type Token struct {
	Hash      [32]byte  `json:"-"`
	UserID    string    `json:"userId"`
	OrgID     string    `json:"orgId"`
	CreatedAt Timestamp `json:"createdAt"`
}

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

// PutOrg creates or replaces an org. A zero CreatedAt is set to now.
func (s *Store) PutOrg(o *Org) error {
	if err := validateKeyPart("org id", o.ID, true); err != nil {
		return err
	}
	stamp(&o.CreatedAt)
	return s.db.Update(func(tx *bolt.Tx) error {
		return putJSON(tx.Bucket(bOrgs), []byte(o.ID), o)
	})
}

// GetOrg returns the org with that id, or ErrNotFound.
func (s *Store) GetOrg(id string) (*Org, error) {
	o := new(Org)
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bOrgs), []byte(id), o, "org")
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// PutUser creates or replaces a user. The org must exist and the role be
// one of the three roles. A zero CreatedAt is set to now.
func (s *Store) PutUser(u *User) error {
	if err := validateKeyPart("user id", u.ID, true); err != nil {
		return err
	}
	switch u.Role {
	case RoleOwner, RoleAdmin, RoleMember:
	default:
		return invalid("role %q is not owner, admin or member", u.Role)
	}
	stamp(&u.CreatedAt)
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bOrgs).Get([]byte(u.OrgID)) == nil {
			return fmt.Errorf("%w: org %q of user %q", ErrNotFound, u.OrgID, u.ID)
		}
		users := tx.Bucket(bUsers)
		var old User
		if getJSON(users, []byte(u.ID), &old, "user") == nil && old.OrgID != u.OrgID {
			if err := tx.Bucket(bOrgUsers).Delete([]byte(old.OrgID + "\x00" + old.ID)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bOrgUsers).Put([]byte(u.OrgID+"\x00"+u.ID), nil); err != nil {
			return err
		}
		return putJSON(users, []byte(u.ID), u)
	})
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

// PutToken stores a token by its hash. Its user must exist and belong to
// its org, so a token can never grant access across orgs.
func (s *Store) PutToken(t *Token) error {
	if t.Hash == [32]byte{} {
		return invalid("token hash is required")
	}
	stamp(&t.CreatedAt)
	return s.db.Update(func(tx *bolt.Tx) error {
		var u User
		if err := getJSON(tx.Bucket(bUsers), []byte(t.UserID), &u, "user"); err != nil {
			return err
		}
		if u.OrgID != t.OrgID {
			return invalid("user %q belongs to org %q, not %q", u.ID, u.OrgID, t.OrgID)
		}
		return putJSON(tx.Bucket(bTokens), t.Hash[:], t)
	})
}

// LookupToken returns the token whose SHA-256 is hash, or ErrNotFound.
func (s *Store) LookupToken(hash [32]byte) (*Token, error) {
	t := &Token{Hash: hash}
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bTokens).Get(hash[:])
		if raw == nil {
			// The hash is not echoed: it is as good as the token for
			// anyone who can replay a lookup.
			return fmt.Errorf("%w: token", ErrNotFound)
		}
		return json.Unmarshal(raw, t)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteToken revokes a token; ErrNotFound if it does not exist.
func (s *Store) DeleteToken(hash [32]byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bTokens)
		if b.Get(hash[:]) == nil {
			return fmt.Errorf("%w: token", ErrNotFound)
		}
		return b.Delete(hash[:])
	})
}
