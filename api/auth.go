package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/promptwall/promptwall/store"
)

// BootstrapUserID is the user id of the bootstrap principal. No stored user
// has it, so onlyUser lists nothing for it: the bootstrap token sees the
// org's records with onlyUser=false.
const BootstrapUserID = "bootstrap"

// Principal is the authenticated caller.
type Principal struct {
	OrgID  string
	UserID string
	// Role is store.RoleOwner, store.RoleAdmin or store.RoleMember.
	Role string
}

// CanSeeOrg reports whether the caller may read every record of its org
// (onlyUser=false, other users' prompts): admins and owners.
func (p Principal) CanSeeOrg() bool {
	return p.Role == store.RoleOwner || p.Role == store.RoleAdmin
}

type principalKey struct{}

func withPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the caller authenticated by the Handler.
func PrincipalFromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// challenge is a 401 with the RFC 6750 challenge: error="invalid_token"
// when a token was presented and rejected, a bare challenge when none was.
func challenge(invalidToken bool, msg string) *apiError {
	c := "Bearer"
	if invalidToken {
		c = `Bearer error="invalid_token"`
	}
	return &apiError{status: http.StatusUnauthorized, code: CodeUnauthorized, message: msg, challenge: c}
}

// authenticate resolves the bearer token to a principal. Every failure that
// depends on the token says only "invalid token", so the answer does not
// reveal whether a token, its user or its org exists.
func (h *Handler) authenticate(r *http.Request) (Principal, *apiError) {
	authz := r.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(authz, " ")
	if authz == "" || !strings.EqualFold(scheme, "Bearer") {
		return Principal{}, challenge(false, "missing bearer token")
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return Principal{}, challenge(true, "invalid token")
	}
	sum := sha256.Sum256([]byte(token))
	if h.bootstrap != nil && subtle.ConstantTimeCompare(sum[:], h.bootstrap[:]) == 1 {
		return Principal{OrgID: h.bootOrg, UserID: BootstrapUserID, Role: store.RoleOwner}, nil
	}
	tok, err := h.store.LookupToken(sum)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, challenge(true, "invalid token")
	}
	if err != nil {
		return Principal{}, internal(err)
	}
	// The lookup is by hash already; comparing again in constant time
	// keeps the decision independent of how the store found the key.
	if subtle.ConstantTimeCompare(tok.Hash[:], sum[:]) != 1 {
		return Principal{}, challenge(true, "invalid token")
	}
	user, err := h.store.GetUser(tok.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, challenge(true, "invalid token")
	}
	if err != nil {
		return Principal{}, internal(err)
	}
	if user.Blocked || user.OrgID != tok.OrgID {
		return Principal{}, challenge(true, "invalid token")
	}
	org, err := h.store.GetOrg(tok.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, challenge(true, "invalid token")
	} else if err != nil {
		return Principal{}, internal(err)
	}
	// A disabled org's users are refused like blocked ones.
	if org.Disabled {
		return Principal{}, challenge(true, "invalid token")
	}
	// LastUsedAt is a convenience for operators spotting stale tokens;
	// failing to record it must not refuse the request.
	// TouchToken writes at most once a minute; checking here first spares
	// the common request its second read.
	if now := time.Now(); now.Sub(tok.LastUsedAt.Time()) >= time.Minute {
		if err := h.store.TouchToken(sum, now); err != nil {
			h.log.Warn("recording token use", zap.Error(err))
		}
	}
	return Principal{OrgID: tok.OrgID, UserID: user.ID, Role: user.Role}, nil
}
