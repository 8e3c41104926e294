package api

import (
	"net/http"

	"github.com/promptwall/promptwall/store"
)

// recordOutcomes are the values of result.outcome, the worst outcome of the
// exchange's scanners (or error when it failed).
var recordOutcomes = map[string]bool{"passed": true, "flagged": true, "modified": true, "blocked": true, "error": true}

var (
	scansSingle = []string{"cursor", "search", "limit", "ascending", "before", "after", "onlyUser"}
	scansMulti  = []string{"outcomes", "endpointId", "projectId", "providerId"}
)

// ScanList is the response of GET /backend/v1/scans.
type ScanList struct {
	Next  string `json:"next"`
	Prev  string `json:"prev"`
	Scans []Scan `json:"scans"`
}

// listScans serves GET /backend/v1/scans. Results are
// always confined to the caller's org; onlyUser (default true) further to
// the caller's own records, and turning it off needs admin or owner.
func (h *Handler) listScans(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	ps, aerr := parseParams(r.URL.RawQuery, scansSingle, scansMulti)
	if aerr != nil {
		return aerr
	}
	q := store.Query{OrgID: p.OrgID}
	if q.Limit, aerr = ps.intRange("limit", 10, 1, store.MaxLimit); aerr != nil {
		return aerr
	}
	if q.Ascending, aerr = ps.boolean("ascending", false); aerr != nil {
		return aerr
	}
	if q.Before, aerr = ps.timestamp("before"); aerr != nil {
		return aerr
	}
	if q.After, aerr = ps.timestamp("after"); aerr != nil {
		return aerr
	}
	onlyUser, aerr := ps.boolean("onlyUser", true)
	if aerr != nil {
		return aerr
	}
	if onlyUser {
		q.UserID = p.UserID
	} else if !p.CanSeeOrg() {
		return &apiError{status: http.StatusForbidden, code: CodeForbidden, param: "onlyUser",
			message: "onlyUser=false needs the admin or owner role"}
	}
	q.Outcomes = ps.vals["outcomes"]
	for _, o := range q.Outcomes {
		if !recordOutcomes[o] {
			return badParam("outcomes", "outcomes must be passed, flagged, modified, blocked or error")
		}
	}
	if q.EndpointIDs, aerr = ps.ids("endpointId"); aerr != nil {
		return aerr
	}
	if q.ProjectIDs, aerr = ps.ids("projectId"); aerr != nil {
		return aerr
	}
	if q.ProviderIDs, aerr = ps.ids("providerId"); aerr != nil {
		return aerr
	}
	q.Search, _ = ps.str("search")
	q.Cursor, _ = ps.str("cursor")

	page, err := h.store.ListPrompts(q)
	if err != nil {
		return listError(err)
	}
	out := ScanList{Next: page.Next, Prev: page.Prev, Scans: make([]Scan, 0, len(page.Items))}
	for _, it := range page.Items {
		out.Scans = append(out.Scans, scanOf(it))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
