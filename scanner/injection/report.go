package injection

import (
	"fmt"
	"slices"
	"strings"
)

// Counts is a confusion matrix.
type Counts struct{ TP, FN, FP, TN int }

// Recall is TP / (TP + FN), NaN without positives.
func (c Counts) Recall() float64 { return ratio(c.TP, c.TP+c.FN) }

// FPR is FP / (FP + TN), NaN without negatives.
func (c Counts) FPR() float64 { return ratio(c.FP, c.FP+c.TN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return nan
	}
	return float64(a) / float64(b)
}

var nan = func() float64 { var z float64; return z / z }()

func (c *Counts) add(label int, flagged bool) {
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

// Evaluation holds detection figures over a labelled set.
type Evaluation struct {
	// Overall counts every example except PurpleLlama's logic-violating
	// ones, which need the application's system prompt to be attacks.
	Overall Counts
	// LogicViolating counts those apart.
	LogicViolating Counts
	// Families counts per reporting family (see Family).
	Families map[string]*Counts
}

// Evaluate counts the examples flagged at threshold.
func Evaluate(examples []Example, probs []float64, threshold float64) Evaluation {
	e := Evaluation{Families: map[string]*Counts{}}
	for i, ex := range examples {
		flagged := probs[i] >= threshold
		fam := Family(ex.Category)
		c := e.Families[fam]
		if c == nil {
			c = new(Counts)
			e.Families[fam] = c
		}
		c.add(ex.Label, flagged)
		if LogicViolating(ex) {
			e.LogicViolating.add(ex.Label, flagged)
		} else {
			e.Overall.add(ex.Label, flagged)
		}
	}
	return e
}

// String renders the figures as a table.
func (e Evaluation) String() string {
	var b strings.Builder
	row := func(name string, c Counts) {
		fmt.Fprintf(&b, "%-44s %4d %4d %4d %4d  %6s  %6s\n", name, c.TP, c.FN, c.FP, c.TN, pct(c.Recall()), pct(c.FPR()))
	}
	fmt.Fprintf(&b, "%-44s %4s %4s %4s %4s  %6s  %6s\n", "family", "TP", "FN", "FP", "TN", "recall", "FPR")
	names := make([]string, 0, len(e.Families))
	for n := range e.Families {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		row(n, *e.Families[n])
	}
	row("OVERALL (without logic-violating)", e.Overall)
	row("purplellama logic-violating (apart)", e.LogicViolating)
	return b.String()
}

func pct(x float64) string {
	if x != x {
		return "-"
	}
	return fmt.Sprintf("%.3f", x)
}

// FamilyWeights lists the learned weight of every rule family, for the
// training report.
func (m *Model) FamilyWeights() string {
	var b strings.Builder
	for f := family(0); f < numFamilies; f++ {
		fmt.Fprintf(&b, "%-22s request %+.3f  content %+.3f\n", families[f].kind, m.fam[f], m.famZone[f])
	}
	fmt.Fprintf(&b, "%-22s %+.3f\n", "bias", m.bias)
	return b.String()
}

// MinEvasionKept is the share of its plain recall the detector must keep
// on attacks passed through an obfuscation (internal/evasion), the bound
// the quality tests hold it to: 0.90, the goal, for every obfuscation.
func MinEvasionKept(string) float64 { return 0.90 }
