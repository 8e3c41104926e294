package api

import (
	"net/http"
	"strconv"

	"github.com/promptwall/promptwall/store"
)

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

// UserList is the response of GET /backend/v1/users.
type UserList struct {
	Next string `json:"next"`
	Prev string `json:"prev"`
	// Roles maps role id to role, for the roles of the listed users when
	// includeRoles=true; {} otherwise.
	Roles map[string]Role `json:"roles"`
	Users []User          `json:"users"`
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
			out.Roles[u.RoleID()] = Role{ID: u.RoleID(), Name: u.Role, Org: u.OrgID, Permissions: u.Permissions()}
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
