package store

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TokenPrefix starts every token CreateToken issues, so that secret scanners and people recognise a leaked one.
const TokenPrefix = "pw_"

// tokenBytes is the entropy of a token: 256 bits.
const tokenBytes = 32

// touchInterval bounds how often TouchToken writes: LastUsedAt is for
// humans spotting stale tokens, and a write per request would put an fsync
// on every API call.
const touchInterval = time.Minute

// Token is an API token, known to the store only by its SHA-256.
type Token struct {
	Hash [32]byte `json:"-"`
	// ID names the token for listing and revocation without the secret.
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	UserID    string    `json:"userId"`
	OrgID     string    `json:"orgId"`
	CreatedAt Timestamp `json:"createdAt"`
	// LastUsedAt is when the token last authenticated, to within a minute;
	// zero if never.
	LastUsedAt Timestamp `json:"lastUsedAt"`
}

// HashToken returns the SHA-256 of a clear token, the only form stored.
func HashToken(clear string) [32]byte { return sha256.Sum256([]byte(clear)) }

func isNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// PutToken stores a token by its hash. Its user must exist and belong to
// its org, so a token can never grant access across orgs. An empty ID is
// set to a new id.
func (s *Store) PutToken(t *Token) error {
	if err := CheckToken(t); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return writeToken(tx, t, false) })
}

func writeToken(tx *bolt.Tx, t *Token, issuing bool) error {
	var u *User
	if err := getJSON(tx.Bucket(bUsers), []byte(t.UserID), &u, "user"); err != nil && !isNotFound(err) {
		return err
	}
	if issuing && u != nil {
		t.OrgID = u.OrgID
	}
	if err := TokenOwnerCheck(t, u, issuing); err != nil {
		return err
	}
	ids := tx.Bucket(bTokenIDs)
	if h := ids.Get([]byte(t.ID)); h != nil && string(h) != string(t.Hash[:]) {
		return TokenIDTaken(t.ID)
	}
	if err := ids.Put([]byte(t.ID), t.Hash[:]); err != nil {
		return err
	}
	return putJSON(tx.Bucket(bTokens), t.Hash[:], t)
}

// CreateToken issues a new token for a user: "pw_" and 32 random bytes in
// base64url. The clear token is returned here and never again; the store
// keeps its SHA-256. The user must exist and not be blocked.
func (s *Store) CreateToken(userID, name string) (string, *Token, error) {
	clear, t, err := NewToken(userID, name)
	if err != nil {
		return "", nil, err
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return writeToken(tx, t, true) }); err != nil {
		return "", nil, err
	}
	return clear, t, nil
}

// LookupToken returns the token whose SHA-256 is hash, or ErrNotFound.
// Callers compare the returned Hash with theirs in constant time.
func (s *Store) LookupToken(hash [32]byte) (*Token, error) {
	t := &Token{Hash: hash}
	err := s.db.View(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bTokens).Get(hash[:])
		if raw == nil {
			return TokenNotFound()
		}
		return json.Unmarshal(raw, t)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// TouchToken records that the token authenticated at at. It writes only
// when the stored LastUsedAt is older than a minute, so calling it on
// every request costs a read; a revoked token is not an error.
func (s *Store) TouchToken(hash [32]byte, at time.Time) error {
	stale := func(t *Token) bool { return TouchDue(t.LastUsedAt, at) }
	t, err := s.LookupToken(hash)
	if isNotFound(err) {
		return nil
	}
	if err != nil || !stale(t) {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bTokens)
		var cur Token
		if err := getJSON(b, hash[:], &cur, "token"); err != nil {
			if isNotFound(err) {
				return nil
			}
			return err
		}
		if !stale(&cur) {
			return nil
		}
		cur.LastUsedAt = TouchTime(at)
		return putJSON(b, hash[:], &cur)
	})
}

// ListTokens returns the tokens of a user, ordered by id. The clear tokens
// are not known to the store.
func (s *Store) ListTokens(userID string) ([]*Token, error) {
	var out []*Token
	err := s.db.View(func(tx *bolt.Tx) error {
		tokens := tx.Bucket(bTokens)
		return tx.Bucket(bTokenIDs).ForEach(func(_, h []byte) error {
			t := new(Token)
			if err := getJSON(tokens, h, t, "token"); err != nil {
				return err
			}
			if t.UserID == userID {
				copy(t.Hash[:], h)
				out = append(out, t)
			}
			return nil
		})
	})
	return out, err
}

// RevokeToken deletes a token given its ID or its clear value (anything
// starting with TokenPrefix is taken as the clear value); ErrNotFound if
// there is no such token.
func (s *Store) RevokeToken(idOrToken string) error {
	if strings.HasPrefix(idOrToken, TokenPrefix) {
		return s.DeleteToken(HashToken(idOrToken))
	}
	var hash [32]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		h := tx.Bucket(bTokenIDs).Get([]byte(idOrToken))
		if len(h) != len(hash) {
			return fmt.Errorf("%w: token %q", ErrNotFound, idOrToken)
		}
		copy(hash[:], h)
		return nil
	})
	if err != nil {
		return err
	}
	return s.DeleteToken(hash)
}

// DeleteToken revokes a token by hash; ErrNotFound if it does not exist.
func (s *Store) DeleteToken(hash [32]byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bTokens)
		var t Token
		if err := getJSON(b, hash[:], &t, "token"); err != nil {
			if isNotFound(err) {
				return TokenNotFound()
			}
			return err
		}
		if t.ID != "" {
			if err := tx.Bucket(bTokenIDs).Delete([]byte(t.ID)); err != nil {
				return err
			}
		}
		return b.Delete(hash[:])
	})
}
