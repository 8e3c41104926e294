package defaults

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/internal/evasion"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/injection"
	"github.com/promptwall/promptwall/scanner/pii"
)

// Detection quality of the default endpoint config, scored on the public
// labelled data internal/dataset reads. Each data set is run through its scanner's stage with the default setting
// and detector config: the full pipeline stops at the first block, so a
// text another default scanner blocks first would say nothing about the
// scanner under test. "Flagged" means the stage's outcome is not Passed.

// stagePipeline builds a pipeline of the one default stage with this id.
func stagePipeline(t *testing.T, id string) *scanner.Pipeline {
	t.Helper()
	stages, err := Stages()
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stages {
		if st.Setting.ID == id {
			p, err := scanner.NewPipeline([]scanner.Stage{st}, scanner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no default stage %q", id)
	return nil
}

// screenUser screens text as the one user message of a conversation.
func screenUser(p *scanner.Pipeline, text string) *scanner.Result {
	conv := &scanner.Conversation{Messages: []scanner.Message{{Role: scanner.RoleUser, Text: text}}}
	return p.Screen(context.Background(), conv, scanner.Input)
}

// stageFlags reports whether the stage with this id did not pass the text.
// injectionDetected reports whether the prompt_injection stage flagged or
// blocked the text.
func injectionDetected(r *scanner.Result) bool {
	for _, sr := range r.Scanners {
		if sr.ScannerID == "prompt_injection" {
			return sr.Outcome == scanner.Flagged || sr.Outcome == scanner.Blocked
		}
	}
	return false
}

func stageFlags(t *testing.T, r *scanner.Result, id string) bool {
	t.Helper()
	for _, sr := range r.Scanners {
		if sr.ScannerID == id {
			if sr.Outcome == scanner.Error || sr.Outcome == scanner.Skipped {
				t.Fatalf("stage %s: outcome %s (%s)", id, sr.Outcome, sr.Err)
			}
			return sr.Outcome != scanner.Passed
		}
	}
	t.Fatalf("stage %s did not run", id)
	return false
}

func TestDefaultInjectionQuality(t *testing.T) {
	rows, err := dataset.ReadJSONL[injection.Example](dataset.Require(t, "injection/dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := stagePipeline(t, "prompt_injection")
	full, err := Pipeline(scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	flags := make([]float64, len(rows)) // 1 flagged, 0 passed: Evaluate at 0.5
	var fullFP, negatives int
	for i, ex := range rows {
		if stageFlags(t, screenUser(p, ex.Text), "prompt_injection") {
			flags[i] = 1
		}
		if ex.Label == 0 {
			negatives++
			if screenUser(full, ex.Text).Outcome == scanner.Blocked {
				fullFP++
			}
		}
	}
	ev := injection.Evaluate(rows, flags, 0.5)
	t.Logf("default prompt_injection stage on injection/dev.jsonl.\n"+
		"NOTE: the shipped model was trained on this same data, so these figures are a TRAINING FIT,\n"+
		"not a measure of quality on unseen text; the honest figures are the grouped cross-validation\n"+
		"of scanner/injection (TestCrossValidation).\n%s", ev)
	t.Logf("whole default pipeline blocks %d of %d benign texts (any scanner; not gated)", fullFP, negatives)
	if r := ev.Overall.Recall(); r < 0.90 {
		t.Errorf("recall (without logic-violating) %.3f < 0.90", r)
	}
	if f := ev.Overall.FPR(); f > 0.03 {
		t.Errorf("FPR %.3f > 0.03", f)
	}
}

type secretRow struct {
	Text  string `json:"text"`
	Label int    `json:"label"`
	Rule  string `json:"rule"`
}

func TestDefaultSecretsQuality(t *testing.T) {
	rows, err := dataset.ReadJSONL[secretRow](dataset.Require(t, "secrets/dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := stagePipeline(t, "secrets")
	var all injection.Counts
	perRule := map[string]*injection.Counts{}
	for _, r := range rows {
		flagged := stageFlags(t, screenUser(p, r.Text), "secrets")
		count(&all, r.Label, flagged)
		for _, rule := range strings.Split(r.Rule, "; ") {
			c := perRule[rule]
			if c == nil {
				c = new(injection.Counts)
				perRule[rule] = c
			}
			count(c, r.Label, flagged)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-60s %4s %4s %4s %4s\n", "rule (misses and false positives only)", "TP", "FN", "FP", "TN")
	names := make([]string, 0, len(perRule))
	for n := range perRule {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if c := perRule[n]; c.FN > 0 || c.FP > 0 {
			fmt.Fprintf(&b, "%-60.60s %4d %4d %4d %4d\n", n, c.TP, c.FN, c.FP, c.TN)
		}
	}
	fmt.Fprintf(&b, "%-60s %4d %4d %4d %4d  recall %.3f  FPR %.3f\n", "OVERALL", all.TP, all.FN, all.FP, all.TN, all.Recall(), all.FPR())
	t.Logf("default secrets stage on secrets/dev.jsonl:\n%s", b.String())
	if r := all.Recall(); r < 0.95 {
		t.Errorf("recall %.3f < 0.95", r)
	}
	if f := all.FPR(); f > 0.05 {
		t.Errorf("FPR %.3f > 0.05", f)
	}
}

func count(c *injection.Counts, label int, flagged bool) {
	switch {
	case label == 1 && flagged:
		c.TP++
	case label == 1:
		c.FN++
	case flagged:
		c.FP++
	default:
		c.TN++
	}
}

type piiRow struct {
	Text  string `json:"text"`
	Spans []struct {
		Type  string `json:"type"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	} `json:"spans"`
}

type span struct {
	start, end int
	kind       string
}

type spanCounts struct{ tp, fp, fn int }

func (c spanCounts) precision() float64 { return ratio(c.tp, c.tp+c.fp) }
func (c spanCounts) recall() float64    { return ratio(c.tp, c.tp+c.fn) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TestDefaultPIIQuality scores exact byte spans per type. The gate is the
// default stage (structured types only) on the six types it enables; the
// table beside it is a pii scanner with every entity, for information.
func TestDefaultPIIQuality(t *testing.T) {
	rows, err := dataset.ReadJSONL[piiRow](dataset.Require(t, "pii/dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p := stagePipeline(t, "pii")
	allKinds, err := pii.New(pii.Config{Entities: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	supported := pii.Kinds()
	def := map[string]*spanCounts{}
	every := map[string]*spanCounts{}
	for _, k := range supported {
		def[k], every[k] = new(spanCounts), new(spanCounts)
	}
	for _, row := range rows {
		var gold []span
		for _, g := range row.Spans {
			if slices.Contains(supported, g.Type) {
				gold = append(gold, span{g.Start, g.End, g.Type})
			}
		}
		var pred []span
		for _, f := range screenUser(p, row.Text).Scanners[0].Findings {
			pred = append(pred, span{f.Start, f.End, f.Kind})
		}
		scoreExact(def, gold, pred, pii.DefaultEntities)
		f, err := allKinds.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(row.Text), Direction: scanner.Input, Role: scanner.RoleUser})
		if err != nil {
			t.Fatal(err)
		}
		pred = pred[:0]
		for _, m := range f.Matches {
			pred = append(pred, span{m.Start, m.End, m.Kind})
		}
		scoreExact(every, gold, pred, supported)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s | %-29s | %-29s\n", "exact spans", "default stage", "all entities (not default)")
	fmt.Fprintf(&b, "%-18s | %4s %4s %4s %6s %6s | %4s %4s %4s %6s %6s\n", "type", "TP", "FP", "FN", "P", "R", "TP", "FP", "FN", "P", "R")
	for _, k := range supported {
		d, e := def[k], every[k]
		dp, dr := "-", "-"
		if slices.Contains(pii.DefaultEntities, k) {
			dp, dr = fmt.Sprintf("%.3f", d.precision()), fmt.Sprintf("%.3f", d.recall())
		}
		fmt.Fprintf(&b, "%-18s | %4d %4d %4d %6s %6s | %4d %4d %4d %6.3f %6.3f\n", k, d.tp, d.fp, d.fn, dp, dr, e.tp, e.fp, e.fn, e.precision(), e.recall())
	}
	t.Logf("pii/dev.jsonl:\n%s", b.String())
	for _, k := range pii.DefaultEntities {
		if c := def[k]; c.precision() < 0.95 || c.recall() < 0.95 {
			t.Errorf("%s: default stage exact precision %.3f recall %.3f, want both >= 0.95", k, c.precision(), c.recall())
		}
	}
}

// scoreExact counts, for the kinds given, each prediction a TP when it
// takes an unmatched gold span of its type with the same bytes.
func scoreExact(c map[string]*spanCounts, gold, pred []span, kinds []string) {
	used := make([]bool, len(gold))
	for _, p := range pred {
		if !slices.Contains(kinds, p.kind) {
			continue
		}
		hit := false
		for i, g := range gold {
			if !used[i] && g == p {
				used[i], hit = true, true
				break
			}
		}
		if hit {
			c[p.kind].tp++
		} else {
			c[p.kind].fp++
		}
	}
	for i, g := range gold {
		if !used[i] && slices.Contains(kinds, g.kind) {
			c[g.kind].fn++
		}
	}
}

// TestDefaultEvasion wraps every attack (label 1, without logic-violating)
// in each obfuscation and screens it with the whole default pipeline. An
// attack counts as caught when the screening blocks: the invisible_text
// scanner strips hidden characters (modify mode) but forwards the rest, so
// only a block stops the injection. Each obfuscation must keep the share of
// the plain recall, measured the same way, that injection.MinEvasionKept
// gives. Of an instruction planted in
// content only the content is obfuscated: its author does not write the
// user's question.
func TestDefaultEvasion(t *testing.T) {
	rows, err := dataset.ReadJSONL[injection.Example](dataset.Require(t, "injection/dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Pipeline(scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type attack struct{ fixed, attacker string }
	var attacks []attack
	for _, ex := range rows {
		if ex.Label == 1 && !injection.LogicViolating(ex) {
			var a attack
			a.fixed, a.attacker = ex.Split()
			attacks = append(attacks, a)
		}
	}
	caught := func(fn func(string) string) int {
		n := 0
		for _, a := range attacks {
			// Caught: the default pipeline blocks it, or its
			// prompt_injection stage detects it (the default mode flags).
			if res := screenUser(p, a.fixed+fn(a.attacker)); res.Outcome == scanner.Blocked || injectionDetected(res) {
				n++
			}
		}
		return n
	}
	plain := caught(func(s string) string { return s })
	var b strings.Builder
	fmt.Fprintf(&b, "%-12s %8s %7s %9s\n", "transform", "caught", "recall", "of plain")
	fmt.Fprintf(&b, "%-12s %4d/%3d %7.3f %9s\n", "plain", plain, len(attacks), ratio(plain, len(attacks)), "-")
	var failed []string
	for _, tr := range evasion.All {
		n := caught(tr.Fn)
		kept := ratio(n, plain)
		fmt.Fprintf(&b, "%-12s %4d/%3d %7.3f %9.3f\n", tr.Name, n, len(attacks), ratio(n, len(attacks)), kept)
		if want := injection.MinEvasionKept(tr.Name); kept < want {
			failed = append(failed, fmt.Sprintf("%s keeps %.3f of plain recall, want >= %.2f", tr.Name, kept, want))
		}
	}
	t.Logf("default pipeline blocks (training-fit model, see TestDefaultInjectionQuality):\n%s", b.String())
	for _, f := range failed {
		t.Error(f)
	}
}
