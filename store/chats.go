package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Chat buckets. The prompts of a chat are found through an index written
// when a prompt is added, rather than by scanning records for ChatID: the
// record writer stays unaware of chats, and a chat reads in one seek.
var (
	bChats       = []byte("chats")            // id -> Chat
	bChatPrompts = []byte("idx_chat_prompts") // chatID\x00 seq(8) -> promptID
)

// ChatAccess is Chat.access: who besides the creator may read the chat.
type ChatAccess struct {
	// Org opens the chat to every user of its org.
	Org bool `json:"org"`
	// Public is the spec's sharing setting, kept as given; Promptwall
	// grants no access through it (nobody outside the org reads a chat).
	Public string `json:"public"`
	// Users are the ids of users of the org who may read it.
	Users []string `json:"users"`
}

// ChatFields is the spec's Chat, exactly its fields: the API serves it
// as it is, so the spec's shape is written down once.
type ChatFields struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	ProjectID string `json:"projectId"`
	// PromptID is the newest prompt of the chat: the parentId that
	// continues it.
	PromptID         string     `json:"promptId"`
	PromptTemplateID string     `json:"promptTemplateId"`
	UserID           string     `json:"userId"`
	Starred          bool       `json:"starred"`
	CreatedAt        Timestamp  `json:"createdAt"`
	UpdatedAt        Timestamp  `json:"updatedAt"`
	Access           ChatAccess `json:"access"`
}

// Chat is the spec's Chat plus its org. Embedding keeps the stored JSON
// the spec's fields followed by orgId, as before.
type Chat struct {
	ChatFields
	OrgID string `json:"orgId"`
}

// Readable reports whether a user of an org may read the chat: its creator, the users in access.users, and the whole org
// when access.org is set; never anyone of another org.
func (c *Chat) Readable(orgID, userID string) bool {
	if c.OrgID != orgID {
		return false
	}
	return c.UserID == userID || c.Access.Org || slices.Contains(c.Access.Users, userID)
}

func (c *Chat) normalize() {
	if c.Access.Users == nil {
		c.Access.Users = []string{}
	}
}

// CreateChat stores a new chat. An empty ID is set to NewID(); zero times
// are set to now. ErrInvalidRecord if the id is taken.
func (s *Store) CreateChat(c *Chat) error {
	if err := PrepareChat(c); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bChats)
		if b.Get([]byte(c.ID)) != nil {
			return ChatExists(c.ID)
		}
		return putJSON(b, []byte(c.ID), c)
	})
}

// GetChat returns the chat with that id, or ErrNotFound.
func (s *Store) GetChat(id string) (*Chat, error) {
	c := new(Chat)
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bChats), []byte(id), c, "chat")
	})
	if err != nil {
		return nil, err
	}
	c.normalize()
	return c, nil
}

// UpdateChat applies fn to the stored chat in one transaction and stores
// the result with UpdatedAt set to now. fn must not change ID, OrgID,
// UserID or CreatedAt (they are restored); an error from fn aborts.
func (s *Store) UpdateChat(id string, fn func(*Chat) error) (*Chat, error) {
	c := new(Chat)
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bChats)
		if err := getJSON(b, []byte(id), c, "chat"); err != nil {
			return err
		}
		if err := UpdateChatWith(c, fn); err != nil {
			return err
		}
		return putJSON(b, []byte(id), c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AddChatPrompt appends a prompt to a chat and makes it the chat's
// PromptID. The prompt need not be committed yet (records are written
// asynchronously); ChatPrompts skips ids it cannot find.
func (s *Store) AddChatPrompt(chatID, promptID string) error {
	if err := CheckPromptID(promptID); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bChats)
		c := new(Chat)
		if err := getJSON(b, []byte(chatID), c, "chat"); err != nil {
			return err
		}
		if err := appendIndex(tx.Bucket(bChatPrompts), chatID, promptID); err != nil {
			return err
		}
		c.PromptID = promptID
		c.UpdatedAt = Timestamp(time.Now().UTC().Truncate(time.Millisecond))
		return putJSON(b, []byte(chatID), c)
	})
}

// ChatPrompts returns the chat's prompts in the order they were added,
// at most MaxChain (the newest), skipping expired ones.
func (s *Store) ChatPrompts(chatID string) ([]*Prompt, error) {
	return s.indexedPrompts(bChatPrompts, chatID)
}

// appendIndex adds owner -> promptID at the end of an owner's list.
func appendIndex(b *bolt.Bucket, owner, promptID string) error {
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	k := binary.BigEndian.AppendUint64([]byte(owner+"\x00"), seq)
	return b.Put(k, []byte(promptID))
}

func (s *Store) indexedPrompts(bucket []byte, owner string) ([]*Prompt, error) {
	out := []*Prompt{}
	err := s.db.View(func(tx *bolt.Tx) error {
		prefix := []byte(owner + "\x00")
		c := tx.Bucket(bucket).Cursor()
		var ids []string
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			ids = append(ids, string(v))
		}
		ids = LastPrompts(ids)
		rb := recordBucketsOf(tx)
		for _, id := range ids {
			ref, ok := rb.byID([]byte(id))
			if !ok {
				continue
			}
			p, err := decodePrompt(tx, ref.body)
			if err != nil {
				return fmt.Errorf("store: prompt %q: %w", id, err)
			}
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
