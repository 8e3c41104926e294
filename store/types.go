package store

import (
	"encoding/json"
	"fmt"
	"time"
)

// timestampLayout is RFC 3339 in UTC with exactly three
// fractional digits, so that timestamps sort as text and read the same in
// every response.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Timestamp is a time that marshals as "2026-11-22T10:04:05.123Z". The zero
// value marshals as "" because the spec carries timestamps as strings and an
// absent time (a scanner that never started) is better empty than year 1.
type Timestamp time.Time

// Time returns t as a time.Time.
func (t Timestamp) Time() time.Time { return time.Time(t) }

// IsZero reports whether t is the zero time.
func (t Timestamp) IsZero() bool { return time.Time(t).IsZero() }

// String formats t the way it is marshalled.
func (t Timestamp) String() string {
	if t.IsZero() {
		return ""
	}
	return time.Time(t).UTC().Format(timestampLayout)
}

// MarshalJSON implements json.Marshaler.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return t.appendJSON(make([]byte, 0, len(timestampLayout)+2)), nil
}

// appendJSON appends t as MarshalJSON writes it. Every record carries
// several timestamps, and AppendFormat interprets the layout on every call:
// four-digit years are written directly instead, digit by digit.
func (t Timestamp) appendJSON(b []byte) []byte {
	if t.IsZero() {
		return append(b, `""`...)
	}
	u := time.Time(t).UTC()
	year, month, day := u.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = u.AppendFormat(b, timestampLayout)
		return append(b, '"')
	}
	hour, minute, sec := u.Clock()
	ms := u.Nanosecond() / 1e6
	return append(b, '"',
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':', byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
}

// UnmarshalJSON implements json.Unmarshaler. It accepts any RFC 3339 time
// (other offsets, other precisions) and "" or null for the zero time.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Timestamp{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	if s == "" {
		*t = Timestamp{}
		return nil
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	*t = Timestamp(v.UTC())
	return nil
}

// Finding is the full detail of one detection, kept beside the spec's bare
// offsets so that an operator can see which message and which kind of data a
// match was, without the matched text itself ever being stored.
type Finding struct {
	// Message is the index of the screened message in the conversation.
	Message int `json:"message"`
	// Role of that message: system, user, assistant or tool.
	Role string `json:"role"`
	// Kind of data found, upper snake case ("EMAIL_ADDRESS").
	Kind string `json:"kind"`
	// Start and End are half-open byte offsets into that message.
	Start int `json:"start"`
	End   int `json:"end"`
	// Score is the detector's confidence in 0..1.
	Score float64 `json:"score"`
}

// ScannerData is ScannerResult.data. The spec shows only type and matches;
// the rest is Promptwall's extension and is omitted when empty.
type ScannerData struct {
	// Type is the detector family: regex, secret, pii, injection, ...
	Type string `json:"type"`
	// Matches are [start, end] byte offsets into the record's input (or
	// its response for the output direction); [] when none, never null.
	Matches [][2]int `json:"matches"`
	// Findings hold the full detail of every match.
	Findings []Finding `json:"findings,omitempty"`
	// Reason is the scanner's operator-facing explanation.
	Reason string `json:"reason,omitempty"`
	// Error is set when the scanner failed.
	Error string `json:"error,omitempty"`
}

// ScannerResult is the spec's ScannerResult; every field is always present.
type ScannerResult struct {
	CompletedDate      Timestamp   `json:"completedDate"`
	CustomConfig       bool        `json:"customConfig"`
	Data               ScannerData `json:"data"`
	Outcome            string      `json:"outcome"`
	ScanDirection      string      `json:"scanDirection"`
	ScannerID          string      `json:"scannerId"`
	ScannerVersionMeta string      `json:"scannerVersionMeta"`
	StartedDate        Timestamp   `json:"startedDate"`
}

// PromptResult is the spec's PromptResult (field result of a Prompt).
type PromptResult struct {
	Analysis       string          `json:"analysis"`
	Files          string          `json:"files"`
	Outcome        string          `json:"outcome"`
	ProviderResult string          `json:"providerResult"`
	Response       string          `json:"response"`
	ScannerResults []ScannerResult `json:"scannerResults"`
}

// Normalize replaces nil slices by empty ones, so JSON shows [] rather than
// null: clients of the spec iterate them without a null check. Records are
// normalized when written and when read; a custom MarshalJSON did this
// before and cost a second marshal and a re-parse of every nested result.
func (r *PromptResult) Normalize() {
	if r.ScannerResults == nil {
		r.ScannerResults = []ScannerResult{}
	}
	for i := range r.ScannerResults {
		if r.ScannerResults[i].Data.Matches == nil {
			r.ScannerResults[i].Data.Matches = [][2]int{}
		}
	}
}

// PromptFields is the spec's Prompt, exactly its fields: the API serves it
// as it is, but for memory's default.
type PromptFields struct {
	ID               string       `json:"id"`
	ExternalMetadata string       `json:"externalMetadata"`
	FromTemplate     bool         `json:"fromTemplate"`
	Input            string       `json:"input"`
	Memory           string       `json:"memory"`
	OrgID            string       `json:"orgId"`
	ParentID         string       `json:"parentId"`
	Preserve         bool         `json:"preserve"`
	ProjectID        string       `json:"projectId"`
	Provider         string       `json:"provider"`
	ReceivedAt       Timestamp    `json:"receivedAt"`
	Result           PromptResult `json:"result"`
	// Type is "prompt" when the request was forwarded to a provider and
	// "scan" when it was only screened.
	Type   string `json:"type"`
	UserID string `json:"userId"`
}

// Prompt is one stored record: the spec's Prompt plus the routing fields the
// gateway needs to filter and to answer fetchScanners. The spec's fields
// come first, in the order the hand-written encoder writes them.
type Prompt struct {
	PromptFields

	// EndpointID is the endpoint whose configuration screened the record.
	EndpointID string `json:"endpointId,omitempty"`
	// ProviderID is the id of the provider the record was sent to; Provider
	// holds its display name as the spec shows it.
	ProviderID string `json:"providerId,omitempty"`
	// ChatID is the chat the prompt belongs to.
	ChatID string `json:"chatId,omitempty"`
	// PromptTemplateID is the template the prompt was built from.
	PromptTemplateID string `json:"promptTemplateId,omitempty"`
	// Scanners is the JSON of the scanner settings that ran, served as
	// promptScanners by GET /prompts/{id}?fetchScanners=true.
	Scanners string `json:"scanners,omitempty"`
	// ScannersRef replaces Scanners in the stored record: the settings are
	// stored once per distinct value, not once per record.
	ScannersRef string `json:"scannersRef,omitempty"`
}

// Record types: a prompt was forwarded to a provider, a scan only
// screened.
const (
	TypePrompt = "prompt"
	TypeScan   = "scan"
)
