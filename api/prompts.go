package api

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/promptwall/promptwall/store"
)

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
	if !mayRead(p, leaf) {
		return notFound
	}
	out := PromptResponse{Prompt: leaf.ID, Memory: make([]Prompt, 0, len(chain))}
	root := chain[0].ID
	for _, c := range chain {
		if !mayRead(p, c) {
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
