// Package record turns one screened exchange into the stored Prompt record:
// which text is the input, how scanner results are reported, and what is
// masked before anything touches the disk. The inline gateway and the API's
// POST /prompts both record through it, so a record reads the same however
// the prompt arrived.
package record

import (
	"strings"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/store"
)

// sensitiveTypes are the detector families whose findings are never stored in
// clear: a detected secret or personal datum must not end up in the
// database, its backups or the API.
var sensitiveTypes = map[string]bool{"secret": true, "pii": true, "sensitive_output": true}

// masks reports whether a scanner's findings are masked before storage:
// those of the sensitive families, and whatever any scanner redacted (modify
// mode), since what the gateway hides from the provider must not sit in
// clear in the database either.
func masks(sr *scanner.ScannerResult) bool {
	return sensitiveTypes[sr.Type] || sr.Outcome == scanner.Modified
}

// NewestUserMessage returns the index of the last user message, or -1. A
// record's input is the newest user turn: earlier turns are their own
// records.
func NewestUserMessage(conv *scanner.Conversation) int {
	for i := len(conv.Messages) - 1; i >= 0; i-- {
		if conv.Messages[i].Role == scanner.RoleUser {
			return i
		}
	}
	return -1
}

// Text returns the text of message i of conv with every sensitive finding of
// the results masked, or "" when i is out of range.
func Text(conv *scanner.Conversation, i int, results ...*scanner.Result) string {
	if conv == nil || i < 0 || i >= len(conv.Messages) {
		return ""
	}
	return Masked(conv.Messages[i].Text, i, results...)
}

// Masked masks in text every sensitive match that the results report for
// message i.
func Masked(text string, i int, results ...*scanner.Result) string {
	var spans []scanner.Match
	for _, res := range results {
		if res == nil {
			continue
		}
		for s := range res.Scanners {
			sr := &res.Scanners[s]
			if !masks(sr) {
				continue
			}
			for _, f := range sr.Findings {
				if f.Message == i {
					spans = append(spans, f.Match)
				}
			}
		}
	}
	if len(spans) == 0 {
		return text
	}
	return scanner.Mask(text, spans)
}

// ScannerResults converts an engine result into the stored ScannerResults.
// data.matches are offsets into the text the record shows for the direction
// (message shown), the full detail of every message is in data.findings.
func ScannerResults(res *scanner.Result, shown int) []store.ScannerResult {
	if res == nil {
		return nil
	}
	return AppendScannerResults(make([]store.ScannerResult, 0, len(res.Scanners)), res, shown)
}

// AddDeferred adds to p the results of the non-blocking scanners, which
// ran after the answer went out: after the blocking scanners' results, and
// their outcome where it is more severe than the recorded one.
func AddDeferred(p *store.Prompt, deferred *scanner.Result, shown int) {
	p.Result.ScannerResults = AppendScannerResults(p.Result.ScannerResults, deferred, shown)
	if deferred.Outcome.Severity() > scanner.Outcome(p.Result.Outcome).Severity() {
		p.Result.Outcome = string(deferred.Outcome)
	}
}

// AppendScannerResults is ScannerResults appending to out, so that the
// results of both directions can share one slice.
func AppendScannerResults(out []store.ScannerResult, res *scanner.Result, shown int) []store.ScannerResult {
	if res == nil {
		return out
	}
	for i := range res.Scanners {
		sr := &res.Scanners[i]
		data := store.ScannerData{Type: sr.Type, Matches: [][2]int{}, Reason: sr.Reason, Error: sr.Err}
		for _, f := range sr.Findings {
			// A detection without a span (a classifier score) locates a
			// message, not bytes: it has no place in matches.
			if f.Message == shown && f.End > f.Start {
				data.Matches = append(data.Matches, [2]int{f.Start, f.End})
			}
			data.Findings = append(data.Findings, store.Finding{
				Message: f.Message, Role: string(f.Role), Kind: f.Kind,
				Start: f.Start, End: f.End, Score: f.Score,
			})
		}
		out = append(out, store.ScannerResult{
			StartedDate:        store.Timestamp(sr.Started),
			CompletedDate:      store.Timestamp(sr.Completed),
			Data:               data,
			Outcome:            string(sr.Outcome),
			ScanDirection:      string(sr.Direction),
			ScannerID:          sr.ScannerID,
			ScannerVersionMeta: sr.Version,
		})
	}
	return out
}

// SensitiveValues lists the texts of every sensitive finding of res in conv:
// the values that must not appear in clear anywhere in a record, including
// raw provider answers that echo them.
func SensitiveValues(conv *scanner.Conversation, res *scanner.Result) []string {
	if conv == nil || res == nil {
		return nil
	}
	var out []string
	for s := range res.Scanners {
		sr := &res.Scanners[s]
		if !masks(sr) {
			continue
		}
		for _, f := range sr.Findings {
			if f.Message < 0 || f.Message >= len(conv.Messages) {
				continue
			}
			text := conv.Messages[f.Message].Text
			if f.Start < 0 || f.End > len(text) || f.Start >= f.End {
				continue
			}
			out = append(out, text[f.Start:f.End])
		}
	}
	return out
}

// MaskValues masks every occurrence of each value in s.
func MaskValues(s string, values []string) string {
	for _, v := range values {
		if v == "" || !strings.Contains(s, v) {
			continue
		}
		s = strings.ReplaceAll(s, v, scanner.Mask(v, []scanner.Match{{Start: 0, End: len(v)}}))
	}
	return s
}

// Response joins the masked texts of an answer's screened messages.
func Response(conv *scanner.Conversation, results ...*scanner.Result) string {
	if conv == nil {
		return ""
	}
	parts := make([]string, 0, len(conv.Messages))
	for i := range conv.Messages {
		parts = append(parts, Text(conv, i, results...))
	}
	return strings.Join(parts, "\n")
}
