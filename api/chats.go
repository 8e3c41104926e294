package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/promptwall/promptwall/store"
)

// ChatResponse is the response of the chat routes.
type ChatResponse struct {
	Chat Chat `json:"chat"`
}

// ChatWithPrompts is the response of GET /backend/v1/chats/{chatId}.
type ChatWithPrompts struct {
	Chat    Chat     `json:"chat"`
	Prompts []Prompt `json:"prompts"`
}

// CreateChatRequest is the body of POST /backend/v1/chats (Promptwall's
// extension: the spec only reads chats).
type CreateChatRequest struct {
	Name      string      `json:"name"`
	ProjectID string      `json:"projectId"`
	Access    *ChatAccess `json:"access"`
}

// UpdateChatRequest is the body of PATCH /backend/v1/chats/{chatId}; absent
// fields stay as they are.
type UpdateChatRequest struct {
	Name    *string     `json:"name"`
	Starred *bool       `json:"starred"`
	Access  *ChatAccess `json:"access"`
}

var errChatNotFound = &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no chat with that id"}

// readableChat loads a chat the caller may read (store.Chat.Readable); any
// other chat, of this org or another, is a 404.
func (h *Handler) readableChat(id string, p Principal) (*store.Chat, *apiError) {
	if aerr := uuidParam("chatId", id); aerr != nil {
		return nil, aerr
	}
	c, err := h.store.GetChat(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errChatNotFound
	}
	if err != nil {
		return nil, internal(err)
	}
	if !c.Readable(p.OrgID, p.UserID) {
		return nil, errChatNotFound
	}
	return c, nil
}

// checkAccessUsers makes sure every user given access exists in the org, so
// a typo does not silently grant nothing (and no id of another org is
// stored).
func (h *Handler) checkAccessUsers(a *ChatAccess, orgID string) *apiError {
	for _, id := range a.Users {
		u, err := h.store.GetUser(id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && u.OrgID != orgID) {
			return badParam("access.users", "user %s is not a user of this organization", id)
		}
		if err != nil {
			return internal(err)
		}
	}
	return nil
}

// accessOf is the access to store from a request's: none when absent, the
// users sorted and without repeats.
func accessOf(a *ChatAccess) ChatAccess {
	if a == nil {
		return ChatAccess{Users: []string{}}
	}
	users := slices.Compact(slices.Sorted(slices.Values(a.Users)))
	if users == nil {
		users = []string{}
	}
	return ChatAccess{Org: a.Org, Public: a.Public, Users: users}
}

// createChat serves POST /backend/v1/chats: 201 {chat}. The caller is the
// chat's creator.
func (h *Handler) createChat(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := noQuery(r); aerr != nil {
		return aerr
	}
	var req CreateChatRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		return aerr
	}
	if req.Name == "" {
		return badParam("name", "name is required")
	}
	if req.Access != nil {
		if aerr := h.checkAccessUsers(req.Access, p.OrgID); aerr != nil {
			return aerr
		}
	}
	c := &store.Chat{ChatFields: store.ChatFields{Name: req.Name, ProjectID: req.ProjectID, UserID: p.UserID,
		Access: accessOf(req.Access)}, OrgID: p.OrgID}
	if err := h.store.CreateChat(c); err != nil {
		return internal(err)
	}
	writeJSON(w, http.StatusCreated, ChatResponse{Chat: chatOf(c)})
	return nil
}

// getChat serves GET /backend/v1/chats/{chatId}: the
// chat and its prompts, oldest first.
func (h *Handler) getChat(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := noQuery(r); aerr != nil {
		return aerr
	}
	c, aerr := h.readableChat(r.PathValue("chatId"), p)
	if aerr != nil {
		return aerr
	}
	prompts, err := h.store.ChatPrompts(c.ID)
	if err != nil {
		return internal(err)
	}
	out := ChatWithPrompts{Chat: chatOf(c), Prompts: make([]Prompt, 0, len(prompts))}
	for _, pr := range prompts {
		// A chat shows its creator's prompts to whoever it is shared
		// with; anyone else's only to those who may read them.
		if pr.OrgID != c.OrgID || (pr.UserID != c.UserID && !mayRead(p, pr)) {
			continue
		}
		out.Prompts = append(out.Prompts, promptOf(pr, pr.ID))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// updateChat serves PATCH /backend/v1/chats/{chatId}: only the creator and
// the org's admins and owners may change a chat; a reader who may not gets
// 403, anyone who cannot even read it 404.
func (h *Handler) updateChat(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := noQuery(r); aerr != nil {
		return aerr
	}
	c, aerr := h.readableChat(r.PathValue("chatId"), p)
	if aerr != nil && !(aerr == errChatNotFound && p.CanSeeOrg()) {
		return aerr
	}
	if c == nil {
		// Admins and owners manage every chat of their org, even ones
		// not shared with them.
		var err error
		c, err = h.store.GetChat(r.PathValue("chatId"))
		if err != nil || c.OrgID != p.OrgID {
			return errChatNotFound
		}
	}
	if c.UserID != p.UserID && !p.CanSeeOrg() {
		return &apiError{status: http.StatusForbidden, code: CodeForbidden, message: "only the chat's creator or an admin may change it"}
	}
	var req UpdateChatRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		return aerr
	}
	if req.Name != nil && *req.Name == "" {
		return badParam("name", "name must not be empty")
	}
	if req.Access != nil {
		if aerr := h.checkAccessUsers(req.Access, p.OrgID); aerr != nil {
			return aerr
		}
	}
	updated, err := h.store.UpdateChat(c.ID, func(ch *store.Chat) error {
		if req.Name != nil {
			ch.Name = *req.Name
		}
		if req.Starred != nil {
			ch.Starred = *req.Starred
		}
		if req.Access != nil {
			ch.Access = accessOf(req.Access)
		}
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return errChatNotFound
	}
	if err != nil {
		return internal(fmt.Errorf("updating chat: %w", err))
	}
	writeJSON(w, http.StatusOK, ChatResponse{Chat: chatOf(updated)})
	return nil
}
