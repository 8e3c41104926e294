package pii

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/scanner"
)

type piiRow struct {
	Text  string `json:"text"`
	Spans []struct {
		Type  string `json:"type"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	} `json:"spans"`
}

// gated are the kinds with validated detectors; the quality gate fails when
// any of them drops below 0.95 exact precision or recall on the dev set.
var gated = []string{KindEmail, KindCreditCard, KindPhone, KindIBAN, KindIP, KindSSN}

type counts struct{ tp, fp, fn int }

func (c counts) prf() (p, r, f float64) {
	if c.tp+c.fp > 0 {
		p = float64(c.tp) / float64(c.tp+c.fp)
	}
	if c.tp+c.fn > 0 {
		r = float64(c.tp) / float64(c.tp+c.fn)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return
}

type span struct {
	start, end int
	kind       string
}

// TestQualityPresidioDev scores the scanner on the presidio-research
// synthetic set: per type, exact byte spans,
// and separately overlap with each gold span matched at most once. Kinds
// are already Presidio names, so no mapping is needed. Set PII_DUMP=KIND
// to log that kind's false positives and negatives.
func TestQualityPresidioDev(t *testing.T) {
	path := dataset.Require(t, "pii/dev.jsonl")
	rows, err := dataset.ReadJSONL[piiRow](path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := New(Config{Entities: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	supported := Kinds()
	dump := os.Getenv("PII_DUMP")
	exact := map[string]*counts{}
	overlap := map[string]*counts{}
	for _, k := range supported {
		exact[k], overlap[k] = &counts{}, &counts{}
	}
	for _, row := range rows {
		f, err := sc.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(row.Text)})
		if err != nil {
			t.Fatal(err)
		}
		var gold, pred []span
		for _, g := range row.Spans {
			if slices.Contains(supported, g.Type) {
				gold = append(gold, span{g.Start, g.End, g.Type})
			}
		}
		for _, m := range f.Matches {
			pred = append(pred, span{m.Start, m.End, m.Kind})
		}
		score(exact, gold, pred, func(g, p span) bool { return g.start == p.start && g.end == p.end })
		score(overlap, gold, pred, func(g, p span) bool { return g.start < p.end && p.start < g.end })
		if dump != "" {
			logDiff(t, dump, row.Text, gold, pred)
		}
	}
	t.Logf("%-18s %5s %5s %5s | %6s %6s %6s | %6s %6s %6s", "type", "TP", "FP", "FN", "P", "R", "F1", "P~", "R~", "F1~")
	for _, k := range supported {
		e, o := exact[k], overlap[k]
		p, r, f1 := e.prf()
		po, ro, fo := o.prf()
		t.Logf("%-18s %5d %5d %5d | %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f", k, e.tp, e.fp, e.fn, p, r, f1, po, ro, fo)
	}
	for _, k := range gated {
		p, r, _ := exact[k].prf()
		if p < 0.95 || r < 0.95 {
			t.Errorf("%s: exact precision %.3f recall %.3f, want both >= 0.95", k, p, r)
		}
	}
}

// score counts TPs greedily: each prediction takes the first unmatched gold
// span of its type that eq accepts.
func score(c map[string]*counts, gold, pred []span, eq func(g, p span) bool) {
	used := make([]bool, len(gold))
	for _, p := range pred {
		hit := false
		for i, g := range gold {
			if !used[i] && g.kind == p.kind && eq(g, p) {
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
		if !used[i] {
			c[g.kind].fn++
		}
	}
}

func logDiff(t *testing.T, kind, text string, gold, pred []span) {
	for _, p := range pred {
		if p.kind == kind && !slices.Contains(gold, p) {
			t.Logf("FP %q in %q", text[p.start:p.end], text)
		}
	}
	for _, g := range gold {
		if g.kind == kind && !slices.Contains(pred, g) {
			t.Logf("FN %q in %q", text[g.start:g.end], text)
		}
	}
}
