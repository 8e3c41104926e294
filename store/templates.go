package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Prompt template buckets.
var (
	bTemplates       = []byte("prompt_templates")     // id -> PromptTemplate
	bTemplatePrompts = []byte("idx_template_prompts") // templateID\x00 seq(8) -> promptID
)

// PromptTemplateFields is the spec's PromptTemplate, exactly its fields:
// the API serves it as it is.
type PromptTemplateFields struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	// PromptID is the prompt the template was made from.
	PromptID  string    `json:"promptId"`
	UserID    string    `json:"userId"`
	CreatedAt Timestamp `json:"createdAt"`
}

// PromptTemplate is the spec's PromptTemplate plus its org: a prompt saved
// to be sent again.
type PromptTemplate struct {
	PromptTemplateFields
	OrgID string `json:"orgId"`
}

// CreatePromptTemplate stores a new template. An empty ID is set to
// NewID(), a zero CreatedAt to now. Its PromptID, when set, becomes the
// first of its prompts.
func (s *Store) CreatePromptTemplate(t *PromptTemplate) error {
	if err := PreparePromptTemplate(t); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bTemplates)
		if b.Get([]byte(t.ID)) != nil {
			return PromptTemplateExists(t.ID)
		}
		if t.PromptID != "" {
			if err := appendIndex(tx.Bucket(bTemplatePrompts), t.ID, t.PromptID); err != nil {
				return err
			}
		}
		return putJSON(b, []byte(t.ID), t)
	})
}

// GetPromptTemplate returns the template with that id, or ErrNotFound.
func (s *Store) GetPromptTemplate(id string) (*PromptTemplate, error) {
	t := new(PromptTemplate)
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bTemplates), []byte(id), t, "prompt template")
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// AddTemplatePrompt records that a prompt was sent from the template.
func (s *Store) AddTemplatePrompt(templateID, promptID string) error {
	if err := CheckPromptID(promptID); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bTemplates).Get([]byte(templateID)) == nil {
			return fmt.Errorf("%w: prompt template %q", ErrNotFound, templateID)
		}
		return appendIndex(tx.Bucket(bTemplatePrompts), templateID, promptID)
	})
}

// TemplatePrompts returns the template's prompts, oldest first: the one it
// was made from, then those sent from it (at most MaxChain, the newest),
// skipping expired ones.
func (s *Store) TemplatePrompts(templateID string) ([]*Prompt, error) {
	return s.indexedPrompts(bTemplatePrompts, templateID)
}
