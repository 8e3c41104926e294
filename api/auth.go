package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/promptwall/promptwall/auth"
)

// BootstrapUserID is the user id of the bootstrap principal. No stored user
// has it, so onlyUser lists nothing for it: the bootstrap token sees the
// org's records with onlyUser=false.
const BootstrapUserID = auth.BootstrapUserID

// Principal is the authenticated caller.
type Principal = auth.Principal

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
	p, err := h.auth.Authenticate(strings.TrimSpace(token))
	if errors.Is(err, auth.ErrInvalidToken) {
		return Principal{}, challenge(true, "invalid token")
	}
	if err != nil {
		return Principal{}, internal(err)
	}
	return p, nil
}
