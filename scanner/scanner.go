// Package scanner is Promptwall's screening engine: it judges the text of a
// conversation with a set of detectors and decides whether it passes, is
// flagged, is redacted or is blocked. It knows nothing of HTTP, Caddy or the
// store; callers hand it a Conversation and read back a Result.
package scanner

import (
	"context"
	"errors"
)

// Direction says which side of the exchange a text comes from.
type Direction string

// The two screening directions: input is the prompt sent to the provider,
// output the provider's answer.
const (
	Input  Direction = "input"
	Output Direction = "output"
)

// Outcome is the verdict of one scanner or of a whole screening, ordered by
// severity: Blocked > Modified > Flagged > Passed. Error records that a
// scanner failed and the fail mode decided; Skipped that a scanner did not
// run (disabled for the direction, or the text was passed through
// unscreened by explicit operator choice).
type Outcome string

// Outcome values as stored in records and served by the API.
const (
	Passed   Outcome = "passed"
	Flagged  Outcome = "flagged"
	Modified Outcome = "modified"
	Blocked  Outcome = "blocked"
	Error    Outcome = "error"
	Skipped  Outcome = "skipped"
)

// Severity ranks outcomes so that the worst one of several wins. Error sits
// between flagged and modified: a fail-open error forwards the text (like a
// flag) but must stand out; a fail-closed error is turned into Blocked by the
// pipeline before ranking.
func (o Outcome) Severity() int {
	switch o {
	case Blocked:
		return 5
	case Modified:
		return 4
	case Error:
		return 3
	case Flagged:
		return 2
	case Passed:
		return 1
	}
	return 0
}

// Mode is what a scanner does with a text it detects something in.
type Mode string

// Modes: what a scanner does with a detection. Block refuses the text,
// modify redacts it and forwards it, flag forwards it and records the
// finding.
const (
	ModeBlock  Mode = "block"
	ModeModify Mode = "modify"
	ModeFlag   Mode = "flag"
)

// Role of a message in a conversation, normalised across wire formats.
type Role string

// Roles every wire format maps onto.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one piece of screenable text in a conversation. A wire format
// may split one provider message into several Messages (content parts, tool
// call arguments); Ref lets the format map a redacted text back to where it
// came from.
type Message struct {
	Role Role
	Text string
	// Ref is opaque to the engine: the wire format's locator of this text
	// (for example a JSON path) used to write a redaction back.
	Ref string
}

// Conversation is what gets screened: the messages in order. For the input
// direction the newest user message is the one the record shows as input.
type Conversation struct {
	Messages []Message
}

// Match is one detection inside a text. Start and End are byte offsets into
// the original (not normalised) text, half-open.
type Match struct {
	Start int
	End   int
	// Kind names what was found in upper snake case ("EMAIL_ADDRESS",
	// "AWS_ACCESS_KEY"); modify mode uses it for the placeholder [KIND_1].
	Kind string
	// Score is the detector's confidence in 0..1; 1 for exact rules.
	Score float64
}

// Finding is a scanner's verdict on one text.
type Finding struct {
	// Detected is true when the scanner's condition holds. A detector may
	// be triggered without spans (a classifier score, a token limit).
	Detected bool
	// Matches locate what was found; they are what modify mode redacts.
	Matches []Match
	// Score is the overall confidence in 0..1 where the detector has one.
	Score float64
	// Reason is a short, operator-facing explanation that never quotes the
	// detected text (it may be stored and logged).
	Reason string
}

// Target is one text handed to a scanner, already normalised.
type Target struct {
	// Text holds the original text and its normalised views.
	Text *Text
	// Direction of the exchange the text belongs to.
	Direction Direction
	// Role of the message the text belongs to.
	Role Role
	// Conversation is the whole exchange, for scanners that need context
	// (prompt_leak compares the answer with the system prompt). Read only.
	Conversation *Conversation
	// FollowsAnswer is set for a user message that comes after an answer
	// of the assistant in its conversation: a follow-up turn, which may
	// speak of "your previous response" in its own right. It is part of
	// the verdict cache's key, so a scanner may depend on it.
	FollowsAnswer bool
}

// Scanner is a detector. Implementations must be safe for concurrent use and
// must not retain the Target after Scan returns. They should honour ctx: the
// pipeline gives each scanner a time budget.
type Scanner interface {
	// Type names the detector family, stored as ScannerResult data.type
	// ("regex", "secret", "pii", "injection", ...).
	Type() string
	// Scan judges one text.
	Scan(ctx context.Context, t *Target) (Finding, error)
}

// Sentinel errors of the engine.
var (
	// ErrTimeout is returned (wrapped) when a scanner exceeds its budget.
	ErrTimeout = errors.New("scanner: time budget exceeded")
	// ErrUnknownScanner is returned when a setting names no registered scanner.
	ErrUnknownScanner = errors.New("scanner: unknown scanner")
)
