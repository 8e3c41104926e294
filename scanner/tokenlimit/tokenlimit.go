// Package tokenlimit flags texts longer than a token budget, counted with the
// tokenizer the upstream model uses (OpenAI's BPE vocabularies, embedded in
// the binary by github.com/tiktoken-go/tokenizer).
//
// Cost. The tokenizer runs at roughly 13 MB/s (about 80 us and 900
// allocations per KiB on the reference machine, against a 50 us budget for the
// whole scanner set on 2 KiB) and its vocabularies take 20-30 ms to load on
// first use,
// so the scanner avoids it wherever a byte count already decides:
//
//   - every token is at least one byte, so a text of at most MaxTokens bytes
//     passes without tokenizing (no allocation);
//   - BPE never merges across the pre-tokenizer's pieces, so the text is
//     tokenized in chunks cut where a piece boundary is certain; counting
//     stops at the chunk that crosses the limit, and stops early as soon as
//     the bytes left cannot hold the tokens left in the budget.
//
// The work is therefore proportional to min(len(text), bytes up to the cut),
// never to the whole of a long text.
package tokenlimit

import (
	"context"
	"errors"
	"fmt"

	"github.com/tiktoken-go/tokenizer"

	"github.com/promptwall/promptwall/scanner"
)

// Type is the detector family reported in ScannerResult data.type.
const Type = "token_limit"

// Kind labels the match covering the text beyond the limit.
const Kind = "TOKEN_LIMIT"

// Scopes of Config.Scope.
const (
	ScopeMessage      = "message"
	ScopeConversation = "conversation"
)

// Config configures the token limit.
type Config struct {
	// Encoding names the BPE vocabulary: "o200k_base" (GPT-4o, GPT-4.1,
	// o-series, GPT-5) or "cl100k_base" (GPT-4, GPT-3.5). Default
	// "o200k_base".
	Encoding string `json:"encoding,omitempty"`
	// MaxTokens is the largest number of tokens allowed. Required, > 0.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Scope says what the budget covers. "message" (the default): each
	// screened text on its own, which is what Scan is handed.
	// "conversation": the screened text together with the messages that
	// precede it in Target.Conversation; the budget left for the text is
	// MaxTokens minus what those messages use, so a long history makes the
	// newest message the one that is flagged (and truncated in modify mode).
	// Per-message framing tokens of the chat formats are not counted.
	Scope string `json:"scope,omitempty"`
}

// Scanner counts tokens. It is safe for concurrent use.
type Scanner struct {
	codec        tokenizer.Codec
	encoding     string
	max          int
	conversation bool
}

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("token_limit: invalid config")

// New validates cfg and builds the scanner. It loads the vocabulary, which
// takes some tens of milliseconds the first time in a process.
func New(cfg Config) (*Scanner, error) {
	if cfg.MaxTokens <= 0 {
		return nil, fmt.Errorf("%w: max_tokens must be > 0, got %d", ErrConfig, cfg.MaxTokens)
	}
	enc := cfg.Encoding
	if enc == "" {
		enc = string(tokenizer.O200kBase)
	}
	switch tokenizer.Encoding(enc) {
	case tokenizer.O200kBase, tokenizer.Cl100kBase:
	default:
		return nil, fmt.Errorf("%w: encoding %q is not one of o200k_base, cl100k_base", ErrConfig, enc)
	}
	s := &Scanner{encoding: enc, max: cfg.MaxTokens}
	switch cfg.Scope {
	case "", ScopeMessage:
	case ScopeConversation:
		s.conversation = true
	default:
		return nil, fmt.Errorf("%w: scope %q is not one of message, conversation", ErrConfig, cfg.Scope)
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(enc))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	s.codec = codec
	return s, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return Type }

// Scan implements scanner.Scanner. It reports one match from the first byte
// of the first token beyond the budget to the end of the text, so modify
// mode truncates the text to the budget.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	text := t.Text.Original
	budget := s.max
	if s.conversation && t.Conversation != nil {
		used, err := s.history(ctx, t, len(text))
		if err != nil {
			return scanner.Finding{}, err
		}
		budget -= used
	}
	if len(text) <= budget {
		return scanner.Finding{}, nil
	}
	if budget < 0 {
		budget = 0
	}
	cut, over, err := s.cut(ctx, text, budget)
	if err != nil {
		return scanner.Finding{}, err
	}
	if !over {
		return scanner.Finding{}, nil
	}
	return scanner.Finding{
		Detected: true,
		Matches:  []scanner.Match{{Start: cut, End: len(text), Kind: Kind, Score: 1}},
		Score:    1,
		Reason:   fmt.Sprintf("text exceeds the limit of %d tokens (%s)", s.max, s.encoding),
	}, nil
}

// history counts the tokens of the messages before the screened one. The
// screened message is the last one with the same role and text; when it is
// not in the conversation (a decoded segment, say) every message counts.
// extra is the length of the screened text: when everything fits in the
// budget by byte count no tokenizing is needed at all.
func (s *Scanner) history(ctx context.Context, t *scanner.Target, extra int) (int, error) {
	msgs := t.Conversation.Messages
	end := len(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == t.Role && msgs[i].Text == t.Text.Original {
			end = i
			break
		}
	}
	total := extra
	for _, m := range msgs[:end] {
		total += len(m.Text)
	}
	if total <= s.max {
		// Byte count bounds token count: the caller's own check passes too.
		return 0, nil
	}
	used := 0
	for _, m := range msgs[:end] {
		n, err := s.count(ctx, m.Text)
		if err != nil {
			return 0, err
		}
		used += n
		if used > s.max {
			break // the budget is gone whatever follows
		}
	}
	return used, nil
}

// count returns the exact number of tokens of text.
func (s *Scanner) count(ctx context.Context, text string) (int, error) {
	n := 0
	for start := 0; start < len(text); {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		end := chunkEnd(text, start, chunkBytes)
		c, err := s.codec.Count(text[start:end])
		if err != nil {
			return 0, fmt.Errorf("token_limit: %w", err)
		}
		n += c
		start = end
	}
	return n, nil
}

// chunkBytes is the smallest chunk handed to the tokenizer: large enough that
// per-call overhead is negligible, small enough that the work done past the
// cut stays small.
const chunkBytes = 2048

// cut finds where the token budget runs out in text. over is false when the
// text fits; otherwise cut is the byte offset where token budget+1 starts.
func (s *Scanner) cut(ctx context.Context, text string, budget int) (cut int, over bool, err error) {
	used := 0
	for start := 0; start < len(text); {
		if len(text)-start <= budget-used {
			// What is left cannot hold more tokens than the budget left.
			return 0, false, nil
		}
		if err := ctx.Err(); err != nil {
			return 0, false, err
		}
		end := chunkEnd(text, start, max(chunkBytes, budget-used+1))
		// Encode rather than Count: it costs the same and, when the limit
		// falls inside this chunk, gives the tokens that locate it without
		// a second pass.
		_, tokens, err := s.codec.Encode(text[start:end])
		if err != nil {
			return 0, false, fmt.Errorf("token_limit: %w", err)
		}
		if used+len(tokens) <= budget {
			used += len(tokens)
			start = end
			continue
		}
		off := start
		for _, tok := range tokens[:budget-used] {
			off += len(tok)
		}
		// Token strings are substrings of valid UTF-8 input; an invalid
		// input is tokenized as U+FFFD, which may shift offsets: clamp.
		return min(off, len(text)), true, nil
	}
	return 0, false, nil
}

// chunkEnd returns an end for the chunk starting at start that is at least
// size bytes long (or the end of text) and falls on a boundary that every
// supported pre-tokenizer splits at, so tokens(text) is the sum of the
// tokens of the chunks. The boundaries used are the two sides of a line
// break or space next to an ASCII letter:
//
//   - after a letter and before ' ' or '\n': a letter piece never takes a
//     following space or newline (the space belongs to the next word);
//   - after '\n' and before a letter: no piece continues from a newline into
//     a letter (punctuation and whitespace pieces end at the newline, letter
//     pieces exclude newlines from their one-character prefix).
//
// Neither regex has look-behind, so tokenizing from a boundary is the same
// as tokenizing from the start of a text. Text with no such boundary (most
// CJK text) is handed over whole.
func chunkEnd(text string, start, size int) int {
	i := start + size
	if i >= len(text) {
		return len(text)
	}
	for ; i < len(text); i++ {
		prev, next := text[i-1], text[i]
		if isLetter(prev) && (next == ' ' || next == '\n') || prev == '\n' && isLetter(next) {
			return i
		}
	}
	return len(text)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

var _ scanner.Scanner = (*Scanner)(nil)
