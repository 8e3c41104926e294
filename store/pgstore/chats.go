package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/promptwall/promptwall/store"
)

// Kinds of promptwall_prompt_links rows.
const (
	linkChat     = "c"
	linkTemplate = "t"
)

// CreateChat stores a new chat, as store.Store.CreateChat.
func (s *Store) CreateChat(c *store.Chat) error {
	if err := store.PrepareChat(c); err != nil {
		return err
	}
	body, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return s.inTx("create chat", func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO promptwall_chats (id, org_id, body) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO NOTHING`, c.ID, c.OrgID, body)
		if err == nil && tag.RowsAffected() == 0 {
			return store.ChatExists(c.ID)
		}
		return err
	})
}

// GetChat returns the chat with that id, or store.ErrNotFound.
func (s *Store) GetChat(id string) (*store.Chat, error) {
	c, err := getByID[store.Chat](s, "promptwall_chats", "chat", id)
	if err != nil {
		return nil, err
	}
	store.NormalizeChat(c)
	return c, nil
}

// updateChat applies fn to the stored chat under a row lock and stores
// the result.
func updateChat(ctx context.Context, tx pgx.Tx, id string, fn func(*store.Chat) error) (*store.Chat, error) {
	c := new(store.Chat)
	if err := getJSON(tx.QueryRow(ctx, `SELECT body FROM promptwall_chats WHERE id = $1 FOR UPDATE`, id), c, "chat", id); err != nil {
		return nil, err
	}
	if err := fn(c); err != nil {
		return nil, err
	}
	body, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	_, err = tx.Exec(ctx, `UPDATE promptwall_chats SET body = $2 WHERE id = $1`, id, body)
	return c, err
}

// UpdateChat applies fn to the stored chat in one transaction, as
// store.Store.UpdateChat.
func (s *Store) UpdateChat(id string, fn func(*store.Chat) error) (*store.Chat, error) {
	var c *store.Chat
	err := s.inTx("update chat", func(ctx context.Context, tx pgx.Tx) error {
		var err error
		c, err = updateChat(ctx, tx, id, func(c *store.Chat) error { return store.UpdateChatWith(c, fn) })
		return err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AddChatPrompt appends a prompt to a chat and makes it the chat's
// PromptID, as store.Store.AddChatPrompt.
func (s *Store) AddChatPrompt(chatID, promptID string) error {
	if err := store.CheckPromptID(promptID); err != nil {
		return err
	}
	return s.inTx("add chat prompt", func(ctx context.Context, tx pgx.Tx) error {
		_, err := updateChat(ctx, tx, chatID, func(c *store.Chat) error {
			return store.UpdateChatWith(c, func(c *store.Chat) error { c.PromptID = promptID; return nil })
		})
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO promptwall_prompt_links (kind, owner_id, prompt_id) VALUES ($1, $2, $3)`,
			linkChat, chatID, promptID)
		return err
	})
}

// ChatPrompts returns the chat's prompts in the order they were added, at
// most store.MaxChain (the newest), skipping expired ones.
func (s *Store) ChatPrompts(chatID string) ([]*store.Prompt, error) {
	return s.linkedPrompts(linkChat, chatID)
}

// CreatePromptTemplate stores a new template, as
// store.Store.CreatePromptTemplate: its PromptID, when set, becomes the
// first of its prompts.
func (s *Store) CreatePromptTemplate(t *store.PromptTemplate) error {
	if err := store.PreparePromptTemplate(t); err != nil {
		return err
	}
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return s.inTx("create prompt template", func(ctx context.Context, tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO promptwall_prompt_templates (id, org_id, body) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO NOTHING`, t.ID, t.OrgID, body)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.PromptTemplateExists(t.ID)
		}
		if t.PromptID == "" {
			return nil
		}
		_, err = tx.Exec(ctx, `INSERT INTO promptwall_prompt_links (kind, owner_id, prompt_id) VALUES ($1, $2, $3)`,
			linkTemplate, t.ID, t.PromptID)
		return err
	})
}

// GetPromptTemplate returns the template with that id, or
// store.ErrNotFound.
func (s *Store) GetPromptTemplate(id string) (*store.PromptTemplate, error) {
	return getByID[store.PromptTemplate](s, "promptwall_prompt_templates", "prompt template", id)
}

// AddTemplatePrompt records that a prompt was sent from the template.
func (s *Store) AddTemplatePrompt(templateID, promptID string) error {
	if err := store.CheckPromptID(promptID); err != nil {
		return err
	}
	return s.read("add template prompt", func(ctx context.Context, q querier) error {
		tag, err := q.Exec(ctx, `INSERT INTO promptwall_prompt_links (kind, owner_id, prompt_id)
			SELECT $1, id, $3 FROM promptwall_prompt_templates WHERE id = $2`, linkTemplate, templateID, promptID)
		if err == nil && tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: prompt template %q", store.ErrNotFound, templateID)
		}
		return err
	})
}

// TemplatePrompts returns the template's prompts, oldest first, as
// store.Store.TemplatePrompts.
func (s *Store) TemplatePrompts(templateID string) ([]*store.Prompt, error) {
	return s.linkedPrompts(linkTemplate, templateID)
}

// linkedPrompts returns the newest store.MaxChain prompts linked to an
// owner, oldest first, skipping those whose record is gone or not yet
// written.
func (s *Store) linkedPrompts(kind, owner string) ([]*store.Prompt, error) {
	out := []*store.Prompt{}
	err := s.read("linked prompts", func(ctx context.Context, q querier) error {
		rows, err := q.Query(ctx, `SELECT prompt_id FROM promptwall_prompt_links
			WHERE kind = $1 AND owner_id = $2 ORDER BY seq DESC LIMIT $3`, kind, owner, store.MaxChain)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		slices.Reverse(ids)
		rows, err = q.Query(ctx, selectRecord+`WHERE p.id = ANY($1)`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		byID := make(map[string]*store.Prompt, len(ids))
		for rows.Next() {
			_, p, err := scanRecord(rows)
			if err != nil {
				return err
			}
			byID[p.ID] = p
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			if p, ok := byID[id]; ok {
				out = append(out, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
