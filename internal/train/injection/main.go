// Command injection trains the prompt_injection scanner's model
// (scanner/injection/model.bin) on the public labelled data
// (../shared/data/injection/dev.jsonl), after reporting honest figures from
// grouped, stratified k-fold cross-validation and choosing the threshold on
// the cross-validated predictions.
//
//	go run ./internal/train/injection [-data path] [-out path] [-folds 5] [-max-fpr 0.01]
//
// PurpleLlama's logic-violating inputs are left out of training and out of
// the headline recall: they break a rule of an application's system prompt
// ("don't talk about music") that the scanner never sees, so most of them
// read as ordinary requests ("what are the latest advances in AI?"). Taught
// as attacks, they would teach the model that ordinary questions are
// attacks; their detection rate is reported on its own line.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/scanner/injection"
)

func main() {
	log.SetFlags(0)
	defPath := ""
	if d := dataset.Dir(); d != "" {
		defPath = filepath.Join(d, "injection", "dev.jsonl")
	}
	data := flag.String("data", defPath, "labelled injection data (JSON Lines)")
	out := flag.String("out", "scanner/injection/model.bin", "where to write the model")
	folds := flag.Int("folds", 5, "cross-validation folds")
	maxFPR := flag.Float64("max-fpr", 0.01, "largest CV false-positive rate the threshold may give")
	window := flag.Int("window", 0, "scoring window in bytes (0: default)")
	lambda := flag.Float64("lambda", 0, "L2 penalty (0: default)")
	epochs := flag.Int("epochs", 0, "SGD epochs (0: default)")
	extra := flag.String("extra", "scanner/injection/testdata", "directory of the written training sets (injection.TrainingSets), trained on in every fold and never scored (\"\" for none)")
	ownRequests := flag.Bool("own-requests", true, "train on planted instructions restated as the user's own request (negatives)")
	loso := flag.Bool("loso", true, "also report leave-one-source-out figures")
	seed := flag.Uint64("seed", 0, "example order to train and cross-validate with (0: default, 1)")
	seeds := flag.Int("seeds", 1, "also report the figures of models trained on this many example orders (seeds 1..N), with their mean and range")
	thresholdOrders := flag.Int("threshold-orders", 3, "choose the threshold on the cross-validated predictions of this many example orders (seeds 1..N), pooled")
	dry := flag.Bool("n", false, "cross-validate only, do not write the model")
	showErrors := flag.Bool("errors", false, "list the texts cross-validation gets wrong (first 160 bytes)")
	flag.Parse()
	if *data == "" {
		log.Fatal("no data: pass -data or set $" + dataset.EnvDir)
	}
	examples, err := dataset.ReadJSONL[injection.Example](*data)
	if err != nil {
		log.Fatal(err)
	}
	opt := injection.TrainOptions{Window: *window, Lambda: *lambda, Epochs: *epochs, Exclude: injection.LogicViolating, OwnRequests: *ownRequests, Seed: *seed}
	if *extra != "" {
		if opt.Extra, err = injection.ReadTrainingSets(*extra); err != nil {
			log.Fatal(err)
		}
	}

	cv := &crossValidated{examples: examples, opt: opt, folds: *folds, bySeed: map[uint64][]float64{}}
	start := time.Now()
	probs := cv.probs(opt.Seed)
	log.Printf("%d-fold cross-validation of %d texts: %v", *folds, len(examples), time.Since(start).Round(time.Millisecond))
	labels := make([]int, len(examples))
	use := make([]bool, len(examples))
	for i, ex := range examples {
		labels[i] = ex.Label
		use[i] = !injection.LogicViolating(ex)
	}
	threshold := pooledThreshold(cv, *thresholdOrders, labels, use, *maxFPR)
	fmt.Printf("threshold (highest CV recall with CV FPR <= %.3f, on the predictions of %d example orders pooled): %.4f\n\n", *maxFPR, *thresholdOrders, threshold)
	fmt.Print(injection.Evaluate(examples, probs, threshold))
	if *showErrors {
		listErrors(examples, probs, threshold)
	}

	if *loso {
		start = time.Now()
		lp, names := injection.LeaveOneSourceOut(examples, opt)
		log.Printf("leave-one-source-out over %d source families: %v", len(names), time.Since(start).Round(time.Millisecond))
		fmt.Printf("\nleave-one-source-out (each family scored by a model trained without it), threshold %.4f:\n\n", threshold)
		fmt.Print(injection.Evaluate(examples, lp, threshold))
		if *showErrors {
			listErrors(examples, lp, threshold)
		}
		// The ranking quality on unseen sources, apart from where the
		// CV-chosen threshold happens to fall on them.
		for _, fpr := range []float64{0.01, 0.02, 0.05} {
			t := injection.ChooseThreshold(lp, labels, use, fpr)
			o := injection.Evaluate(examples, lp, t).Overall
			fmt.Printf("leave-one-source-out recall at its own FPR <= %.2f: %.3f (FPR %.3f)\n", fpr, o.Recall(), o.FPR())
		}
	}
	if *seeds > 1 {
		seedSpread(cv, *maxFPR, *seeds, labels, use)
	}
	if *dry {
		return
	}
	start = time.Now()
	m := injection.Fit(examples, opt)
	m.SetThreshold(threshold)
	fmt.Printf("\nrule family weights of the final model:\n%s", m.FamilyWeights())
	b, err := m.MarshalBinary()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("trained on all data in %v; wrote %s (%d bytes, %d non-zero weights of %d)",
		time.Since(start).Round(time.Millisecond), *out, len(b), m.NumWeights(), m.NumBuckets())
}

// pooledThreshold chooses the threshold on the cross-validated predictions
// of n example orders (seeds 1..n) pooled. On one order's predictions the
// threshold is the score of about the eighteenth highest of 1,781 benign
// texts, and it moved from 0.33 to 0.42 between orders, taking everyday
// false positives with it (IFEval 14 to 28 of 541); pooled, it is the
// quantile of three times as many predictions, and the same whichever order
// the shipped model is trained with.
func pooledThreshold(cv *crossValidated, n int, labels []int, use []bool, maxFPR float64) float64 {
	var probs []float64
	var pl []int
	var pu []bool
	for seed := 1; seed <= max(n, 1); seed++ {
		probs = append(probs, cv.probs(uint64(seed))...)
		pl, pu = append(pl, labels...), append(pu, use...)
	}
	return injection.ChooseThreshold(probs, pl, pu, maxFPR)
}

// crossValidated holds the cross-validated predictions of each example
// order computed so far: the shipped order's figures, the pooled threshold
// and -seeds use the same orders, and each takes seconds to compute.
type crossValidated struct {
	examples []injection.Example
	opt      injection.TrainOptions
	folds    int
	bySeed   map[uint64][]float64
}

// probs returns the cross-validated predictions of the example order seed
// (0 is the default order, 1).
func (cv *crossValidated) probs(seed uint64) []float64 {
	seed = max(seed, 1)
	if p, ok := cv.bySeed[seed]; ok {
		return p
	}
	o := cv.opt
	o.Seed = seed
	p := injection.CrossValidate(cv.examples, cv.folds, o)
	cv.bySeed[seed] = p
	return p
}

// seedSpread prints the headline figures of models trained on n example
// orders. Stochastic gradient descent over a few thousand texts lands on
// noticeably different models from one order to the next, so a change to
// the features or the data is judged by the mean over orders, not by the
// shipped order's figures alone.
func seedSpread(cv *crossValidated, maxFPR float64, n int, labels []int, use []bool) {
	fmt.Printf("\nfigures by example order (seed): CV recall at CV FPR <= %.3f; leave-one-source-out at the CV threshold; leave-one-source-out recall at its own FPR <= 0.01\n\n", maxFPR)
	var cr, lt, lf, l1 []float64
	for seed := 1; seed <= n; seed++ {
		o := cv.opt
		o.Seed = uint64(seed)
		probs := cv.probs(o.Seed)
		th := injection.ChooseThreshold(probs, labels, use, maxFPR)
		c := injection.Evaluate(cv.examples, probs, th).Overall
		lp, _ := injection.LeaveOneSourceOut(cv.examples, o)
		l := injection.Evaluate(cv.examples, lp, th).Overall
		l1t := injection.ChooseThreshold(lp, labels, use, 0.01)
		own := injection.Evaluate(cv.examples, lp, l1t).Overall
		fmt.Printf("seed %2d  CV %.3f @ %.3f  LOSO %.3f @ %.3f  LOSO@1%% %.3f\n", seed, c.Recall(), c.FPR(), l.Recall(), l.FPR(), own.Recall())
		cr, lt, lf, l1 = append(cr, c.Recall()), append(lt, l.Recall()), append(lf, l.FPR()), append(l1, own.Recall())
	}
	fmt.Printf("mean     CV %.3f (%.3f-%.3f)  LOSO %.3f @ %.3f  LOSO@1%% %.3f (%.3f-%.3f)\n",
		mean(cr), slices.Min(cr), slices.Max(cr), mean(lt), mean(lf), mean(l1), slices.Min(l1), slices.Max(l1))
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// listErrors prints the texts a set of held-out scores gets wrong at the
// threshold, the first 160 bytes of each.
func listErrors(examples []injection.Example, probs []float64, threshold float64) {
	for i, ex := range examples {
		if (probs[i] >= threshold) != (ex.Label == 1) {
			t := ex.Text
			if len(t) > 160 {
				t = t[:160]
			}
			fmt.Printf("%s label=%d p=%.3f %q\n", injection.Family(ex.Category), ex.Label, probs[i], t)
		}
	}
}
