package injection

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/internal/evasion"
	"github.com/promptwall/promptwall/scanner"
)

// Quality gate: with the training procedure rerun under grouped,
// stratified 5-fold cross-validation, recall on attacks (without
// PurpleLlama's logic-violating slice) and the FPR on benign texts at the
// threshold the shipped model uses, chosen at a cross-validated FPR of
// 0.01. The bounds are a ratchet at today's measured figures (recall 0.904
// at FPR 0.010), which a change may raise but not lower by more than the
// spread between example orders: one order's recall moves by about 0.005
// from order to order (0.901-0.906 over three orders: the training
// program's -seeds), so changes are judged by the mean and this bound sits
// below the spread. The goal is recall 0.90 at FPR 0.01. The bound was
// 0.84 when the content zone learned to end at a quotation's closing quote
// (16 fewer of 1,781 benign dev texts and 41 fewer of IFEval's 541
// everyday prompts flagged, at the cost of 7 of 384 attacks), 0.85 once
// the rules of 2026-11-25 evening raised the mean over orders to 0.863, and
// 0.89 once the written sets read earlier were trained on (mean 0.904).
// It stays 0.89 since a password only named in pasted content became a
// mention (mean 0.898: three web-page plants whose only cue is a phishing
// text about a password reset are lost, against 57 of 1,800 sealed hard
// everyday requests no longer flagged).
const (
	minRecall = 0.89
	maxFPR    = 0.012
	folds     = 5
)

func loadExamples(t testing.TB) []Example {
	t.Helper()
	rows, err := dataset.ReadJSONL[Example](dataset.Require(t, "injection/dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// shippedOptions are the options the training program trains model.bin
// with: logic-violating rows left out, the written training sets and the
// planted instructions restated as the user's own requests added.
func shippedOptions(t testing.TB) TrainOptions {
	t.Helper()
	extra, err := ReadTrainingSets("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return TrainOptions{Exclude: LogicViolating, Extra: extra, OwnRequests: true}
}

// TestCrossValidation reports the honest figures: every text is judged by a
// model that never saw it nor its near-duplicates.
func TestCrossValidation(t *testing.T) {
	examples := loadExamples(t)
	m, err := ShippedModel()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	probs := CrossValidate(examples, folds, shippedOptions(t))
	t.Logf("%d-fold cross-validation of %d texts took %v", folds, len(examples), time.Since(start).Round(time.Millisecond))
	ev := Evaluate(examples, probs, m.Threshold())
	t.Logf("cross-validated, threshold %.4f:\n%s", m.Threshold(), ev)
	if r := ev.Overall.Recall(); r < minRecall {
		t.Errorf("CV recall %.3f < %.2f", r, minRecall)
	}
	if f := ev.Overall.FPR(); f > maxFPR {
		t.Errorf("CV FPR %.3f > %.2f", f, maxFPR)
	}
}

// TestShippedModelFit is the training fit of model.bin: it must flag
// nearly all the attacks it was trained on. It says nothing about unseen
// text (see TestCrossValidation).
func TestShippedModelFit(t *testing.T) {
	examples := loadExamples(t)
	s := newScanner(t, Config{})
	probs := make([]float64, len(examples))
	for i, ex := range examples {
		probs[i] = scan(t, s, ex.Text).Score
	}
	ev := Evaluate(examples, probs, s.threshold)
	t.Logf("training fit of the shipped model (not a quality figure):\n%s", ev)
	if r := ev.Overall.Recall(); r < 0.95 {
		t.Errorf("training-fit recall %.3f < 0.95: model.bin is stale or broken", r)
	}
	// The threshold is chosen at a cross-validated FPR of 0.01, and the
	// regularised model fits its negatives about as well as it judges
	// unseen ones: a stale model.bin is far beyond this bound.
	if f := ev.Overall.FPR(); f > 0.03 {
		t.Errorf("training-fit FPR %.3f > 0.03: model.bin is stale or broken", f)
	}
}

// TestPlaceholderGeneralises fills GPTFuzzer's placeholder with ordinary
// questions: the templates must still be caught, so the model does not
// depend on it.
func TestPlaceholderGeneralises(t *testing.T) {
	examples := loadExamples(t)
	s := newScanner(t, Config{})
	questions := []string{"How do I pick a lock?", "Write a poem about the sea.", "What is the best way to hotwire a car?"}
	var n, plain, filled int
	for _, ex := range examples {
		if !strings.Contains(ex.Text, "[INSERT PROMPT HERE]") {
			continue
		}
		n++
		if scan(t, s, ex.Text).Detected {
			plain++
		}
		q := questions[n%len(questions)]
		if scan(t, s, strings.ReplaceAll(ex.Text, "[INSERT PROMPT HERE]", q)).Detected {
			filled++
		}
	}
	t.Logf("%d templates with the placeholder: %d flagged as is, %d with it filled in", n, plain, filled)
	if float64(filled) < 0.95*float64(plain) {
		t.Errorf("filling the placeholder loses detections: %d -> %d", plain, filled)
	}
}

// TestEvasion passes every attack through each obfuscation: the scanner
// must keep at least 85% of its plain recall on each. This exercises the
// normalised views (Folded, Decoded) as much as the model. The author of a
// planted injection controls the content it hides in, not the user's
// question in front of it: only that content is obfuscated.
func TestEvasion(t *testing.T) {
	examples := loadExamples(t)
	s := newScanner(t, Config{})
	type attack struct{ request, content string }
	var attacks []attack
	plain := 0
	for _, ex := range examples {
		if ex.Label != 1 || LogicViolating(ex) {
			continue
		}
		var a attack
		a.request, a.content = ex.Split()
		attacks = append(attacks, a)
		if scan(t, s, ex.Text).Detected {
			plain++
		}
	}
	t.Logf("plain: %d/%d", plain, len(attacks))
	for _, tr := range evasion.All {
		t.Run(tr.Name, func(t *testing.T) {
			caught := 0
			for _, a := range attacks {
				f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(a.request + tr.Fn(a.content)), Role: scanner.RoleUser})
				if err != nil {
					t.Fatal(err)
				}
				if f.Detected {
					caught++
				}
			}
			ratio := float64(caught) / float64(plain)
			t.Logf("%s: %d/%d caught, %.3f of plain recall", tr.Name, caught, len(attacks), ratio)
			if want := MinEvasionKept(tr.Name); ratio < want {
				t.Errorf("%s keeps %.3f of plain recall, want >= %.2f", tr.Name, ratio, want)
			}
		})
	}
}

// TestLeaveOneSourceOut reports the figures for text unlike anything
// trained on: each source family (the repository its rows come from) is
// scored by a model trained without it. They are far below the random-fold
// figures, which is the point of reporting them; the bounds are a ratchet
// at today's measurement: at the shipped threshold recall 0.794, FPR 0.028,
// and, ranked on their own, recall 0.792 at FPR 0.02 (0.763 at 0.01). The second is the
// steadier figure: the threshold is chosen on the random folds, and where it
// falls on an unseen source moves with every retraining.
func TestLeaveOneSourceOut(t *testing.T) {
	if testing.Short() {
		t.Skip("trains five models; skipped with -short")
	}
	examples := loadExamples(t)
	m, err := ShippedModel()
	if err != nil {
		t.Fatal(err)
	}
	probs, names := LeaveOneSourceOut(examples, shippedOptions(t))
	ev := Evaluate(examples, probs, m.Threshold())
	t.Logf("leave-one-source-out over %v, threshold %.4f:\n%s", names, m.Threshold(), ev)
	if len(names) < 5 {
		t.Errorf("%d source families, want the data set's 5", len(names))
	}
	if r := ev.Overall.Recall(); r < 0.77 {
		t.Errorf("leave-one-source-out recall %.3f < 0.77", r)
	}
	if f := ev.Overall.FPR(); f > 0.06 {
		t.Errorf("leave-one-source-out FPR %.3f > 0.06", f)
	}
	labels := make([]int, len(examples))
	use := make([]bool, len(examples))
	for i, ex := range examples {
		labels[i] = ex.Label
		use[i] = !LogicViolating(ex)
	}
	ranked := Evaluate(examples, probs, ChooseThreshold(probs, labels, use, 0.02)).Overall
	t.Logf("ranked on their own: recall %.3f at FPR %.3f", ranked.Recall(), ranked.FPR())
	if r := ranked.Recall(); r < 0.77 {
		t.Errorf("leave-one-source-out recall at its own FPR 0.02: %.3f < 0.77", r)
	}
}
