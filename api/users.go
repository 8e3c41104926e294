package api

import (
	"net/http"

	"github.com/promptwall/promptwall/store"
)

// UserList is the response of GET /backend/v1/users.
type UserList struct {
	Next string `json:"next"`
	Prev string `json:"prev"`
	// Roles maps role id to role, for the roles of the listed users when
	// includeRoles=true; {} otherwise.
	Roles map[string]Role `json:"roles"`
	Users []User          `json:"users"`
}

// listUsers serves GET /backend/v1/users. Only owners
// and admins list users (the document's x-promptwall-roles, checked before
// this runs): a member's view of the org is their own records, as with
// onlyUser. The list never leaves the caller's org.
func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	ps, aerr := parseParams(r.URL.RawQuery, []string{"search", "cursor", "limit", "project", "groupId", "roleId", "includeRoles"}, nil)
	if aerr != nil {
		return aerr
	}
	q := store.UserQuery{OrgID: p.OrgID}
	if q.Limit, aerr = ps.intRange("limit", 10, 1, store.MaxLimit); aerr != nil {
		return aerr
	}
	includeRoles, aerr := ps.boolean("includeRoles", false)
	if aerr != nil {
		return aerr
	}
	q.Search, _ = ps.str("search")
	q.Cursor, _ = ps.str("cursor")
	q.Project, _ = ps.str("project")
	q.GroupID, _ = ps.str("groupId")
	q.RoleID, _ = ps.str("roleId")

	page, err := h.store.ListUsers(q)
	if err != nil {
		return listError(err)
	}
	out := UserList{Next: page.Next, Prev: page.Prev, Roles: map[string]Role{}, Users: make([]User, 0, len(page.Items))}
	for _, u := range page.Items {
		out.Users = append(out.Users, userOf(u))
		if includeRoles {
			out.Roles[u.RoleID()] = roleOf(u)
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
