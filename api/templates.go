package api

import (
	"errors"
	"net/http"

	"github.com/promptwall/promptwall/store"
)

// TemplateResponse is the response of POST /backend/v1/prompts/templates.
type TemplateResponse struct {
	PromptTemplate PromptTemplate `json:"promptTemplate"`
}

// TemplateWithPrompts is the response of GET
// /backend/v1/prompts/templates/{promptTemplateId}.
type TemplateWithPrompts struct {
	PromptTemplate PromptTemplate `json:"promptTemplate"`
	Prompts        []Prompt       `json:"prompts"`
}

// CreateTemplateRequest is the body of POST /backend/v1/prompts/templates
// (Promptwall's extension).
type CreateTemplateRequest struct {
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	PromptID  string `json:"promptId"`
}

var errTemplateNotFound = &apiError{status: http.StatusNotFound, code: CodeNotFound, message: "no prompt template with that id"}

// readableTemplate loads a template the caller may use: one of its org,
// created by the caller, or any of the org's for admins and owners (the
// rule of GET /prompts/{id}, since a template exposes its prompts).
func (h *Handler) readableTemplate(id string, p Principal) (*store.PromptTemplate, *apiError) {
	if aerr := uuidParam("promptTemplateId", id); aerr != nil {
		return nil, aerr
	}
	t, err := h.store.GetPromptTemplate(id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errTemplateNotFound
	}
	if err != nil {
		return nil, internal(err)
	}
	if t.OrgID != p.OrgID || (!p.CanSeeOrg() && t.UserID != p.UserID) {
		return nil, errTemplateNotFound
	}
	return t, nil
}

// createTemplate serves POST /backend/v1/prompts/templates: 201
// {promptTemplate}. promptId, when given, must be a prompt the caller may
// read.
func (h *Handler) createTemplate(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := noQuery(r); aerr != nil {
		return aerr
	}
	var req CreateTemplateRequest
	if aerr := decodeBody(w, r, &req); aerr != nil {
		return aerr
	}
	if req.Name == "" {
		return badParam("name", "name is required")
	}
	if req.PromptID != "" {
		if aerr := uuidParam("promptId", req.PromptID); aerr != nil {
			return aerr
		}
		pr, err := h.store.GetPrompt(req.PromptID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && !mayRead(p, pr)) {
			return &apiError{status: http.StatusNotFound, code: CodeNotFound, param: "promptId", message: "no prompt with that promptId"}
		}
		if err != nil {
			return internal(err)
		}
	}
	t := &store.PromptTemplate{PromptTemplateFields: store.PromptTemplateFields{Name: req.Name, ProjectID: req.ProjectID,
		PromptID: req.PromptID, UserID: p.UserID}, OrgID: p.OrgID}
	if err := h.store.CreatePromptTemplate(t); err != nil {
		return internal(err)
	}
	writeJSON(w, http.StatusCreated, TemplateResponse{PromptTemplate: t.PromptTemplateFields})
	return nil
}

// getTemplate serves GET /backend/v1/prompts/templates/{promptTemplateId}:
// the template, the prompt it was made from, and the
// prompts sent from it, oldest first.
func (h *Handler) getTemplate(w http.ResponseWriter, r *http.Request, p Principal) *apiError {
	if aerr := noQuery(r); aerr != nil {
		return aerr
	}
	t, aerr := h.readableTemplate(r.PathValue("promptTemplateId"), p)
	if aerr != nil {
		return aerr
	}
	prompts, err := h.store.TemplatePrompts(t.ID)
	if err != nil {
		return internal(err)
	}
	out := TemplateWithPrompts{PromptTemplate: t.PromptTemplateFields, Prompts: make([]Prompt, 0, len(prompts))}
	for _, pr := range prompts {
		// A member's own template may hold prompts an admin sent from it.
		if !mayRead(p, pr) {
			continue
		}
		out.Prompts = append(out.Prompts, promptOf(pr, pr.ID))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
