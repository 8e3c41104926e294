package api

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/promptwall/promptwall/store"
)

// Prompt is a memory item of GET /backend/v1/prompts/{id}: exactly the
// spec's Prompt fields.
type Prompt struct {
	ID               string             `json:"id"`
	ExternalMetadata string             `json:"externalMetadata"`
	FromTemplate     bool               `json:"fromTemplate"`
	Input            string             `json:"input"`
	Memory           string             `json:"memory"`
	OrgID            string             `json:"orgId"`
	ParentID         string             `json:"parentId"`
	Preserve         bool               `json:"preserve"`
	ProjectID        string             `json:"projectId"`
	Provider         string             `json:"provider"`
	ReceivedAt       store.Timestamp    `json:"receivedAt"`
	Result           store.PromptResult `json:"result"`
	Type             string             `json:"type"`
	UserID           string             `json:"userId"`
}

// PromptResponse is the response of GET /backend/v1/prompts/{id}.
type PromptResponse struct {
	// Memory is the conversation from its root to the prompt, oldest first.
	Memory []Prompt `json:"memory"`
	// Prompt is the id of the prompt asked for.
	Prompt string `json:"prompt"`
	// PromptScanners is the JSON of the scanner settings that ran, when
	// fetchScanners=true; otherwise "".
	PromptScanners string `json:"promptScanners"`
}

func promptOf(p *store.Prompt, root string) Prompt {
	memory := p.Memory
	if memory == "" {
		// memory is the conversation's root id: the first prompt of its
		// parentId chain.
		memory = root
	}
	return Prompt{
		ID: p.ID, ExternalMetadata: p.ExternalMetadata, FromTemplate: p.FromTemplate, Input: p.Input,
		Memory: memory, OrgID: p.OrgID, ParentID: p.ParentID, Preserve: p.Preserve, ProjectID: p.ProjectID,
		Provider: p.Provider, ReceivedAt: p.ReceivedAt, Result: p.Result, Type: p.Type, UserID: p.UserID,
	}
}

// getPrompt serves GET /backend/v1/prompts/{promptId}.
//
// Visibility: a prompt of another org does not exist for the caller (404).
// Within the org, admins and owners read any prompt; a member reads only
// prompts they sent, mirroring onlyUser on the scans list, where a member
// cannot turn onlyUser off. A member's memory likewise omits earlier turns
// sent by someone else, so no route exposes another user's input.
func (h *Handler) getPrompt(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	ps, aerr := parseParams(r.URL.RawQuery, []string{"fetchScanners"}, nil)
	if aerr != nil {
		return aerr
	}
	fetch, aerr := ps.boolean("fetchScanners", false)
	if aerr != nil {
		return aerr
	}
	raw := r.PathValue("promptId")
	id, err := uuid.Parse(raw)
	// uuid.Parse also takes urn:uuid:, braces and bare hex; the API takes
	// the canonical form only.
	if err != nil || len(raw) != 36 {
		return badParam("promptId", "promptId must be a UUID")
	}
	notFound := &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no prompt with that id"}
	chain, err := h.store.Chain(id.String())
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return internal(err)
	}
	leaf := chain[len(chain)-1]
	if leaf.OrgID != p.OrgID || (!p.CanSeeOrg() && leaf.UserID != p.UserID) {
		return notFound
	}
	out := PromptResponse{Prompt: leaf.ID, Memory: make([]Prompt, 0, len(chain))}
	root := chain[0].ID
	for _, c := range chain {
		if c.OrgID != p.OrgID || (!p.CanSeeOrg() && c.UserID != p.UserID) {
			continue
		}
		out.Memory = append(out.Memory, promptOf(c, root))
	}
	if fetch {
		out.PromptScanners = leaf.Scanners
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
