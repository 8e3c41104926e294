// Package evaluate measures scanners on labelled texts: how many of the
// texts that should be caught each scanner catches, how many clean texts it
// flags, and how long it takes. It is what `caddy promptwall eval` prints,
// and it has no Caddy dependency so tests and tools can run it on scanners
// they build themselves.
//
// Input is JSON Lines, one row per text:
//
//	{"text": "...", "label": 0|1, "category": "family/sub"}
//	{"text": "...", "spans": [{"start": 0, "end": 5, "kind": "EMAIL_ADDRESS"}]}
//
// Span offsets are UTF-8 byte offsets, half-open; "type" is accepted for
// "kind". A span row's label is 1 when it has spans.
package evaluate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/promptwall/promptwall/scanner"
)

// Options tune an evaluation.
type Options struct {
	// Direction screens the texts as prompts (Input, the default) or as
	// answers (Output).
	Direction scanner.Direction
	// CategoryDepth groups categories by their first N slash-separated
	// segments ("bipia/planted-email/end/x" at 2 is "bipia/planted-email");
	// 0 keeps whole categories.
	CategoryDepth int
	// SpanTypes are the scanner types (scanner.Scanner.Type) whose matches
	// are scored against gold spans; nil means "pii". Other scanners'
	// matches carry kinds of their own (secret rules, regex names) that no
	// PII data set labels.
	SpanTypes []string
}

// Counts are one scanner's figures over a set of rows. Precision, Recall and
// FalsePositiveRate are nil when undefined (nothing flagged, no positive
// rows, no negative rows).
type Counts struct {
	Texts          int `json:"texts"`
	Positives      int `json:"positives"`
	Negatives      int `json:"negatives"`
	Caught         int `json:"caught"`
	Missed         int `json:"missed"`
	FalsePositives int `json:"falsePositives"`
	// Errors counts texts the scanner failed on (an error, a panic, a
	// budget overrun); they count as not detected unless it detected
	// something before failing.
	Errors            int      `json:"errors"`
	Precision         *float64 `json:"precision"`
	Recall            *float64 `json:"recall"`
	FalsePositiveRate *float64 `json:"falsePositiveRate"`
	// MeanMicros is the scanner's mean time per text in microseconds, run
	// alone: it includes building the normalised views it reads.
	MeanMicros float64 `json:"meanMicros"`

	total time.Duration
}

// Category is a scanner's figures on the rows of one category.
type Category struct {
	Category string `json:"category"`
	Counts
}

// KindCounts are exact-span figures for one entity kind: a predicted span
// is caught when a gold span of the same kind has the same start and end.
type KindCounts struct {
	Kind           string   `json:"kind"`
	Gold           int      `json:"gold"`
	Predicted      int      `json:"predicted"`
	Caught         int      `json:"caught"`
	Missed         int      `json:"missed"`
	FalsePositives int      `json:"falsePositives"`
	Precision      *float64 `json:"precision"`
	Recall         *float64 `json:"recall"`
}

// ScannerReport is one scanner's evaluation.
type ScannerReport struct {
	ID         string       `json:"id"`
	Type       string       `json:"type"`
	Overall    Counts       `json:"overall"`
	Categories []Category   `json:"categories,omitempty"`
	Kinds      []KindCounts `json:"kinds,omitempty"`
}

// Report is the evaluation of every scanner on the same rows.
type Report struct {
	Direction scanner.Direction `json:"direction"`
	Rows      int               `json:"rows"`
	Positives int               `json:"positives"`
	Negatives int               `json:"negatives"`
	// SpanRows counts the rows that carried gold spans.
	SpanRows int `json:"spanRows"`
	// MeanMicros is the mean time per text of all the scanners run together
	// in one pipeline, in microseconds. It is below the sum of the
	// scanners' own times: each of those includes building the normalised
	// views of the text it uses, which a pipeline builds once.
	MeanMicros float64         `json:"meanMicros"`
	Scanners   []ScannerReport `json:"scanners"`
}

// NoCategory is the category of rows without one, reported only when other
// rows have one.
const NoCategory = "(none)"

// ErrNoScanners is returned when no stage is enabled for the direction.
var ErrNoScanners = errors.New("evaluate: no enabled scanner screens this direction")

// Run screens every row with every enabled stage that screens
// opts.Direction and scores each scanner on its own verdict. Each stage is
// rebuilt as a fail-open flagger in a pipeline of its own, without a
// verdict cache: in the configured pipeline a block or a fail-closed error
// skips the scanners after it; sharing one pipeline would bill the text's
// lazily built normalised views to whichever scanner asks first; and a
// cache would time lookups instead of scans. Rows and scanners run one at a
// time, so the times are not inflated by scanners competing for cores.
func Run(ctx context.Context, stages []scanner.Stage, rows []Row, opts Options) (*Report, error) {
	dir := cmp.Or(opts.Direction, scanner.Input)
	if dir != scanner.Input && dir != scanner.Output {
		return nil, fmt.Errorf("evaluate: direction %q: want input or output", dir)
	}
	spanTypes := opts.SpanTypes
	if spanTypes == nil {
		spanTypes = []string{"pii"}
	}
	var run []scanner.Stage
	var pipes []*scanner.Pipeline
	for _, st := range stages {
		dirs := st.Setting.Directions
		if dirs == nil {
			dirs = []scanner.Direction{scanner.Input}
		}
		if !st.Setting.Enabled || !slices.Contains(dirs, dir) {
			continue
		}
		st.Setting.Mode = scanner.ModeFlag
		st.Setting.FailMode = scanner.FailOpen
		st.Setting.Blocking = true
		st.Setting.Directions = []scanner.Direction{dir}
		p, err := scanner.NewPipeline([]scanner.Stage{st}, scanner.Options{})
		if err != nil {
			return nil, err
		}
		run = append(run, st)
		pipes = append(pipes, p)
	}
	if len(run) == 0 {
		return nil, ErrNoScanners
	}
	// The scanners together cost less than the sum of their own times,
	// because they share the normalised views; this pipeline measures that.
	all, err := scanner.NewPipeline(run, scanner.Options{})
	if err != nil {
		return nil, err
	}
	var allTime time.Duration

	rep := &Report{Direction: dir, Rows: len(rows)}
	accs := make([]*acc, len(run))
	for i, st := range run {
		accs[i] = &acc{
			rep:    ScannerReport{ID: st.Setting.ID, Type: st.Scanner.Type()},
			cats:   map[string]*Counts{},
			kinds:  map[string]*KindCounts{},
			byKind: slices.Contains(spanTypes, st.Scanner.Type()),
		}
	}
	role := scanner.RoleUser
	if dir == scanner.Output {
		role = scanner.RoleAssistant
	}
	hasCategories := false
	for _, row := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if row.Label == 1 {
			rep.Positives++
		} else {
			rep.Negatives++
		}
		if row.HasSpans {
			rep.SpanRows++
		}
		cat := group(row.Category, opts.CategoryDepth)
		if cat == "" {
			// Grouped too, so that the categories add up to the overall row
			// when only some rows have one.
			cat = NoCategory
		} else {
			hasCategories = true
		}
		conv := &scanner.Conversation{}
		if row.System != "" {
			conv.Messages = append(conv.Messages, scanner.Message{Role: scanner.RoleSystem, Text: row.System})
		}
		conv.Messages = append(conv.Messages, scanner.Message{Role: role, Text: row.Text})
		msg := len(conv.Messages) - 1
		start := time.Now()
		all.Screen(ctx, conv, dir)
		allTime += time.Since(start)
		for i, p := range pipes {
			res := p.Screen(ctx, conv, dir)
			accs[i].add(&res.Scanners[0], row, cat, msg)
		}
	}
	if len(rows) > 0 {
		rep.MeanMicros = float64(allTime) / float64(len(rows)) / float64(time.Microsecond)
	}
	for _, a := range accs {
		rep.Scanners = append(rep.Scanners, a.finish(hasCategories))
	}
	return rep, nil
}

// group cuts a category to its first depth segments.
func group(cat string, depth int) string {
	if depth <= 0 {
		return cat
	}
	parts := strings.SplitN(cat, "/", depth+1)
	if len(parts) > depth {
		parts = parts[:depth]
	}
	return strings.Join(parts, "/")
}

type acc struct {
	rep    ScannerReport
	cats   map[string]*Counts
	kinds  map[string]*KindCounts
	byKind bool
}

func (a *acc) add(sr *scanner.ScannerResult, row Row, cat string, msg int) {
	detected := false
	var pred []Span
	for _, f := range sr.Findings {
		if f.Message != msg {
			continue // a finding in the system prompt is not the row's
		}
		detected = true
		if f.End > f.Start {
			pred = append(pred, Span{Start: f.Start, End: f.End, Kind: f.Kind})
		}
	}
	failed := sr.Err != ""
	d := sr.Completed.Sub(sr.Started)
	a.rep.Overall.add(row.Label, detected, failed, d)
	c := a.cats[cat]
	if c == nil {
		c = &Counts{}
		a.cats[cat] = c
	}
	c.add(row.Label, detected, failed, d)
	if a.byKind && row.HasSpans {
		a.scoreSpans(row.Spans, pred)
	}
}

func (c *Counts) add(label int, detected, failed bool, d time.Duration) {
	c.Texts++
	c.total += d
	if failed {
		c.Errors++
	}
	switch {
	case label == 1 && detected:
		c.Positives++
		c.Caught++
	case label == 1:
		c.Positives++
		c.Missed++
	case detected:
		c.Negatives++
		c.FalsePositives++
	default:
		c.Negatives++
	}
}

func (c *Counts) finish() {
	c.Precision = ratio(c.Caught, c.Caught+c.FalsePositives)
	c.Recall = ratio(c.Caught, c.Positives)
	c.FalsePositiveRate = ratio(c.FalsePositives, c.Negatives)
	if c.Texts > 0 {
		c.MeanMicros = float64(c.total) / float64(c.Texts) / float64(time.Microsecond)
	}
}

// scoreSpans matches predictions to gold spans exactly. A scanner may
// report the same span twice (two rules, a decoded payload); duplicates are
// counted once so they are not false positives.
func (a *acc) scoreSpans(gold, pred []Span) {
	kind := func(k string) *KindCounts {
		kc := a.kinds[k]
		if kc == nil {
			kc = &KindCounts{Kind: k}
			a.kinds[k] = kc
		}
		return kc
	}
	goldSet := make(map[Span]bool, len(gold))
	for _, g := range gold {
		if !goldSet[g] {
			goldSet[g] = true
			kind(g.Kind).Gold++
		}
	}
	seen := make(map[Span]bool, len(pred))
	for _, p := range pred {
		if seen[p] {
			continue
		}
		seen[p] = true
		kc := kind(p.Kind)
		kc.Predicted++
		if goldSet[p] {
			kc.Caught++
		} else {
			kc.FalsePositives++
		}
	}
	for g := range goldSet {
		if !seen[g] {
			kind(g.Kind).Missed++
		}
	}
}

func (a *acc) finish(withCategories bool) ScannerReport {
	r := a.rep
	r.Overall.finish()
	if withCategories {
		for name, c := range a.cats {
			c.finish()
			r.Categories = append(r.Categories, Category{Category: name, Counts: *c})
		}
		slices.SortFunc(r.Categories, func(x, y Category) int { return strings.Compare(x.Category, y.Category) })
	}
	for _, kc := range a.kinds {
		kc.Precision = ratio(kc.Caught, kc.Predicted)
		kc.Recall = ratio(kc.Caught, kc.Gold)
		r.Kinds = append(r.Kinds, *kc)
	}
	slices.SortFunc(r.Kinds, func(x, y KindCounts) int { return strings.Compare(x.Kind, y.Kind) })
	return r
}

func ratio(n, d int) *float64 {
	if d == 0 {
		return nil
	}
	v := float64(n) / float64(d)
	return &v
}
