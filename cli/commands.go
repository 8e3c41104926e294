// Package cli holds Promptwall's operator commands, `caddy promptwall
// scan|user|token|campaign`, registered with caddycmd when the package is
// imported (the root package promptwall imports it). The user and token
// commands work on the database directly and know nothing of Caddy; scan
// compiles a config's endpoints through caddymodule.
package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/promptwall/promptwall/store"
)

// OpenTimeout is how long a command waits for the database lock. bbolt
// allows one process at a time, so while the gateway runs the lock never
// frees; waiting long would only delay the explanation.
const OpenTimeout = time.Second

// OpenStore opens the database for an operator command. Retention is off:
// a command must never expire records under a retention other than the
// gateway's. When the file is locked the error says what to do.
func OpenStore(path string) (*store.Store, error) {
	st, err := store.Open(store.Options{Path: path, OpenTimeout: OpenTimeout, Retention: -1})
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%s is in use, most likely by the running gateway (bbolt admits one process at a time): "+
			"stop it (caddy stop) and retry, or use the running gateway's /backend/v1 API instead: %w", path, err)
	}
	return st, err
}

// Database is the store an operator command opens: a bbolt file, or the
// store a config names when it is not one (PostgreSQL, shared with the
// running gateways, so the commands work while they run).
type Database struct {
	// Path is the bbolt file.
	Path string
	// Open, when set, opens the store instead of Path.
	Open func() (store.Backend, error)
}

// open opens the database.
func (db Database) open() (store.Backend, error) {
	if db.Open != nil {
		return db.Open()
	}
	st, err := OpenStore(db.Path)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// withStore opens the database, runs fn and closes it, reporting a close
// error only when fn succeeded.
func withStore(db Database, fn func(store.IdentityStore) error) (err error) {
	st, err := db.open()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); err == nil {
			err = cerr
		}
	}()
	return fn(st)
}

// findOrg resolves an org given by id or by name.
func findOrg(st store.IdentityStore, org string) (*store.Org, error) {
	if org == "" {
		return nil, errors.New("an organization (id or name) is required")
	}
	o, err := st.GetOrg(org)
	if errors.Is(err, store.ErrNotFound) {
		o, err = st.GetOrgByName(org)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no organization with id or name %q", org)
	}
	return o, err
}

// findUser resolves a user of org given by id or by e-mail.
func findUser(st store.IdentityStore, org *store.Org, user string) (*store.User, error) {
	u, err := st.GetUser(user)
	if err == nil && u.OrgID != org.ID {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) && strings.Contains(user, "@") {
		u, err = st.GetUserByEmail(org.ID, user)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("no user %q in organization %q", user, org.Name)
	}
	return u, err
}

// UserAddArgs are the arguments of `caddy promptwall user add`.
type UserAddArgs struct {
	// Org is the organization's id or name.
	Org string
	// Email is required and unique within the org.
	Email string
	Name  string
	// Role is owner, admin or member. Default: member.
	Role     string
	Projects []string
	GroupIDs []string
	Teams    []string
}

// UserAdd creates a user and prints its id.
func UserAdd(w io.Writer, db Database, a UserAddArgs) error {
	if a.Role == "" {
		a.Role = store.RoleMember
	}
	return withStore(db, func(st store.IdentityStore) error {
		org, err := findOrg(st, a.Org)
		if err != nil {
			return err
		}
		u := &store.User{OrgID: org.ID, Email: a.Email, Name: a.Name, Role: a.Role, Verified: true,
			Projects: a.Projects, GroupIDs: a.GroupIDs, Teams: a.Teams}
		if err := st.CreateUser(u); err != nil {
			return fmt.Errorf("adding user: %w", err)
		}
		_, err = fmt.Fprintf(w, "created user %s <%s>, %s of organization %q\n", u.ID, u.Email, u.Role, org.Name)
		return err
	})
}

// UserList prints the users of an org, newest first, as a table.
func UserList(w io.Writer, db Database, org string) error {
	return withStore(db, func(st store.IdentityStore) error {
		o, err := findOrg(st, org)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tEMAIL\tNAME\tROLE\tBLOCKED\tCREATED")
		q := store.UserQuery{OrgID: o.ID, Limit: store.MaxLimit}
		for {
			page, err := st.ListUsers(q)
			if err != nil {
				return err
			}
			for _, u := range page.Items {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\n", u.ID, u.Email, u.Name, u.Role, u.Blocked, u.CreatedAt)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		return tw.Flush()
	})
}

// UserBlock blocks (or, with blocked false, unblocks) a user given by id
// or e-mail. A blocked user's tokens stop working at once.
func UserBlock(w io.Writer, db Database, org, user string, blocked bool) error {
	return withStore(db, func(st store.IdentityStore) error {
		o, err := findOrg(st, org)
		if err != nil {
			return err
		}
		u, err := findUser(st, o, user)
		if err != nil {
			return err
		}
		if err := st.BlockUser(u.ID, blocked); err != nil {
			return err
		}
		verb := "blocked"
		if !blocked {
			verb = "unblocked"
		}
		_, err = fmt.Fprintf(w, "%s user %s <%s>\n", verb, u.ID, u.Email)
		return err
	})
}

// TokenCreate issues a token for a user given by id or e-mail and prints
// it. This is the only time the token is shown.
func TokenCreate(w io.Writer, db Database, org, user, name string) error {
	return withStore(db, func(st store.IdentityStore) error {
		o, err := findOrg(st, org)
		if err != nil {
			return err
		}
		u, err := findUser(st, o, user)
		if err != nil {
			return err
		}
		clear, tok, err := st.CreateToken(u.ID, name)
		if err != nil {
			return fmt.Errorf("creating token: %w", err)
		}
		_, err = fmt.Fprintf(w, "token id: %s\nuser:     %s <%s>, %s of organization %q\ntoken:    %s\n"+
			"Store the token now: it is not shown again. Revoke it with: caddy promptwall token revoke %s\n",
			tok.ID, u.ID, u.Email, u.Role, o.Name, clear, tok.ID)
		return err
	})
}

// TokenRevoke deletes a token given by its id or its clear value.
func TokenRevoke(w io.Writer, db Database, idOrToken string) error {
	return withStore(db, func(st store.IdentityStore) error {
		if err := st.RevokeToken(idOrToken); errors.Is(err, store.ErrNotFound) {
			return errors.New("no such token (already revoked?)")
		} else if err != nil {
			return err
		}
		_, err := fmt.Fprintln(w, "token revoked")
		return err
	})
}
