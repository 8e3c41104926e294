// Package auth resolves a Promptwall API token to the principal it stands
// for. The /backend/v1 API and the inline gateway both authenticate through
// it; each keeps only where it reads the token from. It knows nothing of
// HTTP or Caddy.
package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// ErrInvalidToken is every refusal that depends on the token: unknown,
// revoked, of a blocked user or of a disabled organization. One error for
// all of them, so an answer does not reveal which exists.
var ErrInvalidToken = errors.New("invalid token")

// BootstrapUserID is the user id of the bootstrap principal. No stored user
// has it, so a listing restricted to the caller's own records lists nothing
// for it.
const BootstrapUserID = "bootstrap"

// Principal is an authenticated caller.
type Principal struct {
	OrgID  string
	UserID string
	// Role is store.RoleOwner, store.RoleAdmin or store.RoleMember.
	Role string
}

// CanSeeOrg reports whether the caller may read every record of its org
// (other users' prompts included): admins and owners.
func (p Principal) CanSeeOrg() bool {
	return p.Role == store.RoleOwner || p.Role == store.RoleAdmin
}

// Authenticator checks tokens against a store and the bootstrap token.
type Authenticator struct {
	// Store holds the tokens' SHA-256 hashes, users and organizations.
	Store store.IdentityStore
	// BootstrapHash is the SHA-256 of the bootstrap token, the owner's
	// credential of the organization BootstrapOrgID; nil for none.
	BootstrapHash  *[32]byte
	BootstrapOrgID string
	// Logger reports a failure to record a token's use. Default: none.
	Logger *zap.Logger
}

// Authenticate resolves token. It returns ErrInvalidToken for every failure
// that depends on the token, and any other error (a store failure, which
// callers answer with 500) wrapped.
func (a *Authenticator) Authenticate(token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrInvalidToken
	}
	sum := sha256.Sum256([]byte(token))
	if a.BootstrapHash != nil && subtle.ConstantTimeCompare(sum[:], a.BootstrapHash[:]) == 1 {
		return Principal{OrgID: a.BootstrapOrgID, UserID: BootstrapUserID, Role: store.RoleOwner}, nil
	}
	tok, err := a.Store.LookupToken(sum)
	if err != nil {
		return Principal{}, storeErr("looking up token", err)
	}
	// The lookup is by hash already; comparing again in constant time
	// keeps the decision independent of how the store found the key.
	if subtle.ConstantTimeCompare(tok.Hash[:], sum[:]) != 1 {
		return Principal{}, ErrInvalidToken
	}
	user, err := a.Store.GetUser(tok.UserID)
	if err != nil {
		return Principal{}, storeErr("reading the token's user", err)
	}
	if user.Blocked || user.OrgID != tok.OrgID {
		return Principal{}, ErrInvalidToken
	}
	org, err := a.Store.GetOrg(tok.OrgID)
	if err != nil {
		return Principal{}, storeErr("reading the token's organization", err)
	}
	// A disabled org's users are refused like blocked ones.
	if org.Disabled {
		return Principal{}, ErrInvalidToken
	}
	a.touch(sum, tok)
	return Principal{OrgID: tok.OrgID, UserID: user.ID, Role: user.Role}, nil
}

// touch records the token's use. LastUsedAt is a convenience for operators
// spotting stale tokens: failing to record it must not refuse the request.
// The store writes it at most once a minute; checking here first spares the
// common request a second read.
func (a *Authenticator) touch(sum [32]byte, tok *store.Token) {
	now := time.Now()
	if now.Sub(tok.LastUsedAt.Time()) < time.Minute {
		return
	}
	if err := a.Store.TouchToken(sum, now); err != nil && a.Logger != nil {
		a.Logger.Warn("recording token use", zap.Error(err))
	}
}

// storeErr maps a missing record to ErrInvalidToken and wraps any other
// store failure.
func storeErr(what string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrInvalidToken
	}
	return fmt.Errorf("%s: %w", what, err)
}
