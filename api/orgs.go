package api

import (
	"errors"
	"net/http"

	"github.com/promptwall/promptwall/store"
)

// OrgList is the response of GET /backend/v1/orgs.
type OrgList struct {
	Orgs []Organization `json:"orgs"`
}

// listOrgs serves GET /backend/v1/orgs: the caller's organization, and
// only it (nobody sees another org's data). Every role may read it: members need the feature flags too.
func (h *Handler) listOrgs(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if _, aerr := parseParams(r.URL.RawQuery, nil, nil); aerr != nil {
		return aerr
	}
	o, err := h.store.GetOrg(p.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		// Authentication saw the org a moment ago; it can only have
		// vanished meanwhile.
		return &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "the organization no longer exists"}
	}
	if err != nil {
		return internal(err)
	}
	writeJSON(w, http.StatusOK, OrgList{Orgs: []Organization{orgOf(o)}})
	return nil
}
