package injection

import (
	"cmp"
	"context"
	"math"
	mathbits "math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/promptwall/promptwall/scanner"
)

// This file is the training procedure of the shipped model. It lives in the
// package, not in the training program, so that the package's tests can
// rerun the cross-validation and report honest figures with exactly the
// features and scoring the scanner uses.

// Example is one labelled text.
type Example struct {
	Text string `json:"text"`
	// Label is 1 for an injection or jailbreak, 0 for a benign text.
	Label int `json:"label"`
	// Category is the data set's slash path; its first segments name the
	// family the figures are reported by and the folds are stratified on.
	Category string `json:"category"`
	// Source is the data set row's origin, "owner/repo:path"; its
	// repository is the source family leave-one-source-out holds out.
	Source string `json:"source,omitempty"`
	// Role is the role of the message the text was sent in ("user" when
	// empty; "tool" for a tool's result), which places its content zone.
	Role string `json:"role,omitempty"`
}

// Split returns the part of the example an attacker cannot change and the
// part they wrote: for an instruction planted in content after the user's
// own question (BIPIA's planted rows, PurpleLlama's indirect injections),
// the question and the content; for any other text, nothing and the whole
// text. Evasion tests obfuscate only the attacker's part.
func (ex Example) Split() (fixed, attacker string) {
	if !strings.HasPrefix(ex.Category, "bipia/planted-") && !strings.HasPrefix(ex.Category, "purplellama/indirect/") {
		return "", ex.Text
	}
	cs := contentStart(ex.Text, ex.role())
	return ex.Text[:cs], ex.Text[cs:]
}

// role is the message role the example is judged in.
func (ex Example) role() scanner.Role {
	if ex.Role == "" {
		return scanner.RoleUser
	}
	return scanner.Role(ex.Role)
}

// TrainOptions tunes Fit. The zero value means the defaults below.
type TrainOptions struct {
	// Window is the scoring window in bytes. Default 1024.
	Window int
	// Lambda is the L2 penalty. Default 5e-5.
	//
	// Lambda and Epochs were chosen by the mean over six example orders
	// (the training program's -seeds), not by one order's figures: one
	// order's recall moves by a few points from order to order. Against
	// 2e-5 and 12 epochs, this pair kept the cross-validated recall and
	// raised recall on source families never trained on.
	Lambda float64
	// Epochs of stochastic gradient descent. Default 24.
	Epochs int
	// Eta0 is the initial learning rate. Default 0.5.
	Eta0 float64
	// Seed makes the example order reproducible. Default 1.
	Seed uint64
	// Exclude leaves examples out of training (they are still scored by
	// CrossValidate). Default: none.
	Exclude func(Example) bool
	// Extra examples are trained on in every fold and by Fit but never
	// scored: hand-written texts, which must not count in a reported
	// figure. Default: none.
	Extra []Example
	// OwnRequests adds, to every training set, the planted instructions of
	// its rows restated as the user's own request (OwnRequests): negatives
	// that teach the request zone what the content zone must not forget.
	// Derived from the training rows only, so a fold never sees its test
	// rows' attacks. Default false.
	OwnRequests bool

	spec featureSpec
}

func (o TrainOptions) withDefaults() TrainOptions {
	if o.Window <= 0 {
		o.Window = 1024
	}
	if o.Lambda <= 0 {
		o.Lambda = 5e-5
	}
	if o.Epochs <= 0 {
		o.Epochs = 24
	}
	if o.Eta0 <= 0 {
		o.Eta0 = 0.5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.spec.bits == 0 {
		o.spec = defaultSpec
	}
	return o
}

// sparse is one training vector: hashed buckets (value tf/sqrt(n)) and the
// set of rule families hit (value 1).
type sparse struct {
	idx  []uint32
	val  []float32
	fams uint32
	// content: the window starts in the content zone.
	content bool
	// n is the number of feature occurrences in the window.
	n int32
}

// prepared holds the training vectors of one example: its windows as the
// scanner cuts them.
type prepared struct {
	windows []sparse
	label   int
	// planted: an attack known to sit in the content zone; only windows
	// there can be its attack window.
	planted bool
}

// prepare featurizes an example the way Model.score does: the folded view,
// the same windows, the same rule hits.
func prepare(ex Example, o TrainOptions, sc *scratch) prepared {
	text := scanner.NewText(ex.Text)
	view := text.Folded()
	s := view.S
	_, z := contentZone(text, view, ex.role())
	out := &sc.out
	o.spec.extract(s, out, nil)
	feats := append([]feature(nil), out.feats...)
	toks := out.toks
	sc.hits = rules.match(s, toks, sc.hits[:0])
	half, count := blockLayout(len(s), o.Window)
	fixed, _ := ex.Split()
	p := prepared{label: ex.Label, planted: ex.Label == 1 && fixed != ""}
	last := max(count-1, 1)
	for k := 0; k < last; k++ {
		in := func(pos int) bool {
			b := blockOf(pos, half, count)
			return b == k || b == k+1
		}
		counts := map[uint32]float32{}
		n := 0
		for _, f := range feats {
			if in(int(f.pos)) {
				addFeature(counts, f, z, o.spec.bits)
				n++
			}
		}
		var fams uint32
		for _, h := range sc.hits {
			if st := int(toks[h.from].start); in(st) {
				fams |= famBit(h.fam, st, z)
			}
		}
		var v sparse
		norm := float32(1 / math.Sqrt(math.Max(float64(n), 1)))
		for b, c := range counts {
			v.idx = append(v.idx, b)
			v.val = append(v.val, c*norm)
		}
		v.fams = fams
		v.n = int32(n)
		v.content = count > 1 && z.has(k*half)
		p.windows = append(p.windows, v)
	}
	for _, h := range sc.hits {
		a, e, ok := hitWindow(toks, h, len(s))
		if !ok {
			continue
		}
		counts := map[uint32]float32{}
		n := 0
		i := sort.Search(len(feats), func(k int) bool { return int(feats[k].pos) > a })
		for ; i < len(feats) && int(feats[i].pos) <= e; i++ {
			addFeature(counts, feats[i], z, o.spec.bits)
			n++
		}
		v := sparse{fams: famsIn(sc.hits, toks, a, e, z)}
		norm := float32(1 / math.Sqrt(math.Max(float64(n), 1)))
		for b, c := range counts {
			v.idx = append(v.idx, b)
			v.val = append(v.val, c*norm)
		}
		v.content = z.has(a)
		v.n = int32(n)
		p.windows = append(p.windows, v)
	}
	forContentWindows(feats, z, func(a, e, i, j int) {
		counts := map[uint32]float32{}
		for _, f := range feats[i:j] {
			addFeature(counts, f, z, o.spec.bits)
		}
		v := sparse{fams: famsIn(sc.hits, toks, a, e, z)}
		norm := float32(1 / math.Sqrt(math.Max(float64(j-i), 1)))
		for b, c := range counts {
			v.idx = append(v.idx, b)
			v.val = append(v.val, c*norm)
		}
		v.content = true
		v.n = int32(j - i)
		p.windows = append(p.windows, v)
	})
	return p
}

// addFeature counts one feature occurrence in its bucket and, in the
// content zone, in its content-zone bucket too, as featureSink.sum weighs it.
func addFeature(counts map[uint32]float32, f feature, z zone, bits uint8) {
	if z.hasFeature(int(f.pos)) {
		counts[f.bucket] += 0.5
		counts[zoneBucket(f.bucket, bits)]++
	} else {
		counts[f.bucket]++
	}
}

// famIndex returns the index in the weights fit keeps of bit k of a
// family bit set (famBits): the request zone's families first, then the
// content zone's.
func famIndex(k int) (int, bool) {
	switch {
	case k < int(numFamilies):
		return k, true
	case k >= zoneShift && k < zoneShift+int(numFamilies):
		return k - zoneShift + int(numFamilies), true
	}
	return 0, false
}

// famLambda is the pull of a family weight towards its prior (see
// families), much stronger than Lambda: a family seen in one or two texts
// moves by a fraction of a logit, one seen in dozens by several.
const famLambda = 1e-3

// fit trains the weights on the prepared examples at idx.
func fit(data []prepared, idx []int, o TrainOptions) *Model {
	v := make([]float64, 1<<o.spec.bits)
	var fw [2 * numFamilies]float64
	for f := range fw {
		fw[f] = families[f%int(numFamilies)].prior
	}
	var sw [sizeRows][sizeBuckets]float64
	scale := 1.0
	bias := 0.0
	// An attack is one window of its text, not all of them: the rest of a
	// long jailbreak or of an e-mail with one planted sentence is ordinary
	// text. So an attack is one training item whose window is, at each
	// step, the one the model scores highest (multiple-instance learning);
	// every window of a benign text is an item of its own. A planted
	// attack's window is looked for in the content zone only: the user's
	// question in front of it is the same in its clean twin.
	type item struct {
		ex, win int // win < 0: the best-scoring window of an attack
	}
	var items []item
	var nPos, nNeg float64
	for _, i := range idx {
		if len(data[i].windows) == 0 {
			continue
		}
		if data[i].label == 1 {
			items = append(items, item{i, -1})
			nPos++
			continue
		}
		for k := range data[i].windows {
			items = append(items, item{i, k})
			nNeg++
		}
	}
	if nPos == 0 || nNeg == 0 {
		return nil
	}
	total := nPos + nNeg
	wPos, wNeg := total/(2*nPos), total/(2*nNeg)
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	dot := func(x sparse) float64 {
		s := 0.0
		for j, b := range x.idx {
			s += v[b] * float64(x.val[j])
		}
		s = s*scale + bias + sw[sizeRow(x.fams)][sizeBucket(x.n)]
		for bits := x.fams; bits != 0; bits &= bits - 1 {
			if f, ok := famIndex(mathbits.TrailingZeros32(bits)); ok {
				s += fw[f]
			}
		}
		return s
	}
	t := 0.0
	for epoch := 0; epoch < o.Epochs; epoch++ {
		rng.Shuffle(len(items), func(a, b int) { items[a], items[b] = items[b], items[a] })
		for _, it := range items {
			var x sparse
			if it.win >= 0 {
				x = data[it.ex].windows[it.win]
			} else {
				best := math.Inf(-1)
				for _, w := range data[it.ex].windows {
					if data[it.ex].planted && !w.content {
						continue
					}
					if d := dot(w); d > best {
						best, x = d, w
					}
				}
			}
			y, cw := -1.0, wNeg
			if data[it.ex].label == 1 {
				y, cw = 1, wPos
			}
			eta := o.Eta0 / (1 + o.Lambda*o.Eta0*t)
			t++
			m := dot(x)
			g := -y * cw * sigmoid(-y*m)
			scale *= 1 - eta*o.Lambda
			if scale < 1e-9 {
				for j := range v {
					v[j] *= scale
				}
				scale = 1
			}
			step := eta * g / scale
			for j, b := range x.idx {
				v[b] -= step * float64(x.val[j])
			}
			bias -= eta * g * 0.1
			// Without a rule hit, a window's length may only lower its
			// score: a length alone is no evidence of an attack, and a
			// free weight learned that the data's few very short texts
			// are mostly attacks ("Tell me a joke." scored 0.61).
			row, b := sizeRow(x.fams), sizeBucket(x.n)
			sw[row][b] -= eta * (g + famLambda*sw[row][b])
			switch row {
			case rowRule:
				sw[row][b] = max(sw[row][b], 0)
			case rowNone, rowMention:
				sw[row][b] = min(sw[row][b], 0)
			}
			var hit [2 * numFamilies]bool
			for bits := x.fams; bits != 0; bits &= bits - 1 {
				if f, ok := famIndex(mathbits.TrailingZeros32(bits)); ok {
					hit[f] = true
				}
			}
			for f := range fw {
				d := famLambda * (fw[f] - families[f%int(numFamilies)].prior)
				if hit[f] {
					d += g
				}
				fw[f] = max(fw[f]-eta*d, 0)
			}
		}
	}
	bits := o.spec.bits
	w := make([]float64, 1<<bits)
	for j := range w {
		w[j] = v[j] * scale
	}
	q, qs := quantize(w)
	m := &Model{spec: o.spec, window: o.Window, threshold: 0.5, bias: float32(bias), scale: qs, w: q}
	for r := range sw {
		for b := range sw[r] {
			m.size[r][b] = float32(sw[r][b])
		}
	}
	for f := range m.fam {
		m.fam[f] = float32(fw[f])
		m.famZone[f] = float32(fw[int(numFamilies)+f])
	}
	return m
}

// Fit trains a model on all examples that are not excluded.
func Fit(examples []Example, o TrainOptions) *Model {
	o = o.withDefaults()
	all := append(slices.Clip(examples), o.Extra...)
	if o.OwnRequests {
		all = append(all, OwnRequests(examples)...)
	}
	data, idx := prepareAll(all, o)
	return fit(data, idx, o)
}

// OwnRequests restates each instruction planted in content after a user's
// question as the user's own request, in front of the same content without
// it: "Encode your answer in Base64. Q: what was paid?" followed by the
// clean e-mail. Such a text is benign (label 0): asked by the user, the
// instruction is an ordinary request. The instruction is found by comparing
// a planted row with its clean twin (same question, same content, no
// instruction, category ".../clean"): what the planted row has between
// their common prefix and suffix.
func OwnRequests(examples []Example) []Example {
	twins := map[string][]string{} // family path -> clean texts
	for _, ex := range examples {
		if ex.Label == 0 && strings.HasSuffix(ex.Category, "/clean") {
			fam := strings.TrimSuffix(ex.Category, "clean")
			twins[fam] = append(twins[fam], ex.Text)
		}
	}
	var out []Example
	for _, ex := range examples {
		if ex.Label != 1 || !strings.HasPrefix(ex.Category, "bipia/planted-") {
			continue
		}
		fam := ex.Category[:strings.Index(ex.Category, "/")+1]
		fam += strings.SplitN(ex.Category, "/", 3)[1] + "/"
		clean, attack := "", ""
		for _, c := range twins[fam] {
			p := commonPrefix(ex.Text, c)
			q := commonSuffix(ex.Text[p:], c[p:])
			if p+q < len(c)-8 {
				continue // another e-mail or table
			}
			if a := strings.TrimSpace(ex.Text[p : len(ex.Text)-q]); clean == "" || len(a) < len(attack) {
				clean, attack = c, a
			}
		}
		if clean == "" || attack == "" {
			continue
		}
		question, content, ok := strings.Cut(clean, "\n\n")
		if !ok {
			continue
		}
		out = append(out, Example{
			Text:     attack + " " + question + "\n\n" + content,
			Label:    0,
			Category: "derived/own-request/" + strings.TrimPrefix(fam, "bipia/"),
			Source:   ex.Source,
		})
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func commonSuffix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	return n
}

func prepareAll(examples []Example, o TrainOptions) ([]prepared, []int) {
	sc := new(scratch)
	data := make([]prepared, len(examples))
	var idx []int
	for i, ex := range examples {
		if o.Exclude != nil && o.Exclude(ex) {
			continue
		}
		data[i] = prepare(ex, o, sc)
		idx = append(idx, i)
	}
	return data, idx
}

// CrossValidate runs k-fold cross-validation of Fit and returns every
// example's out-of-fold probability, computed by a Scanner with the fold's
// model (default config: decoded payloads screened, the model's window).
// Folds are stratified on Family and label and grouped so that
// near-duplicate texts and the variants of one BIPIA attack never straddle
// a training and a test fold (see Groups). Excluded examples are never
// trained on but are scored by the model of the fold they fall in.
func CrossValidate(examples []Example, k int, o TrainOptions) []float64 {
	return crossValidate(examples, Folds(examples, k), k, o)
}

// SourceFamily is the repository a row comes from ("microsoft/BIPIA"), or
// its category's first segment when the row names no source.
func SourceFamily(ex Example) string {
	if repo, _, ok := strings.Cut(ex.Source, ":"); ok {
		return repo
	}
	first, _, _ := strings.Cut(ex.Category, "/")
	return first
}

// LeaveOneSourceOut returns every example's probability from a model
// trained without any row of its source family (SourceFamily): the figure
// for text unlike anything trained on, where random folds let a source's
// style leak from training into test. It also returns the families in the
// order of their folds.
func LeaveOneSourceOut(examples []Example, o TrainOptions) ([]float64, []string) {
	var names []string
	index := map[string]int{}
	fold := make([]int, len(examples))
	for i, ex := range examples {
		fam := SourceFamily(ex)
		k, ok := index[fam]
		if !ok {
			k = len(names)
			index[fam] = k
			names = append(names, fam)
		}
		fold[i] = k
	}
	return crossValidate(examples, fold, len(names), o), names
}

// crossValidate scores every example with the model trained on the folds
// other than its own.
func crossValidate(examples []Example, fold []int, k int, o TrainOptions) []float64 {
	o = o.withDefaults()
	data, _ := prepareAll(append(slices.Clip(examples), o.Extra...), o)
	probs := make([]float64, len(examples))
	sc := new(scratch)
	for f := 0; f < k; f++ {
		var train []int
		for i, ex := range examples {
			if fold[i] != f && (o.Exclude == nil || !o.Exclude(ex)) {
				train = append(train, i)
			}
		}
		for i := range o.Extra {
			train = append(train, len(examples)+i)
		}
		foldData := data
		if o.OwnRequests {
			var rows []Example
			for _, i := range train {
				if i < len(examples) {
					rows = append(rows, examples[i])
				}
			}
			foldData = slices.Clip(data)
			for _, ex := range OwnRequests(rows) {
				train = append(train, len(foldData))
				foldData = append(foldData, prepare(ex, o, sc))
			}
		}
		m := fit(foldData, train, o)
		s, err := NewWithModel(Config{}, m)
		if err != nil {
			panic(err) // a model fresh from fit always validates
		}
		for i, ex := range examples {
			if fold[i] != f {
				continue
			}
			d, err := s.screenDecision(context.Background(), &scanner.Target{Text: scanner.NewText(ex.Text), Direction: scanner.Input, Role: ex.role()})
			if err != nil {
				panic(err) // a scan fails only on a cancelled context
			}
			probs[i] = d
		}
	}
	return probs
}

// Family is the reporting family of a data set category: the category path
// cut to the level at which its rows share a label and a kind (for example
// "purplellama/direct/security-violating", "bipia/text/targeted",
// "bipia/benign/email-context").
func Family(category string) string {
	p := strings.Split(category, "/")
	switch {
	case p[0] == "purplellama" && len(p) >= 4:
		return p[0] + "/" + p[1] + "/" + p[len(p)-1]
	case p[0] == "bipia" && len(p) >= 3 && p[1] != "code":
		return strings.Join(p[:3], "/")
	case p[0] == "bipia" && len(p) >= 2:
		return p[0] + "/" + p[1]
	}
	return category
}

// LogicViolating reports whether an example is one of PurpleLlama's
// logic-violating inputs, which break a rule of an application's system
// prompt the scanner never sees ("don't discuss music"); they are reported
// apart and left out of training (see the training program).
func LogicViolating(ex Example) bool {
	return strings.HasPrefix(ex.Category, "purplellama/") && strings.HasSuffix(ex.Category, "/logic-violating")
}

// Groups assigns every example a group id such that texts in one group must
// share a fold: near-duplicates (word-trigram Jaccard similarity above 0.4,
// estimated with MinHash; the templates of PurpleLlama's indirect attacks and
// BIPIA's emails are reused with small changes) and the variants of one
// BIPIA attack (same leaf category, "bipia/code/Keylogging").
func Groups(examples []Example) []int {
	parent := make([]int, len(examples))
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	union := func(a, b int) { parent[find(a)] = find(b) }

	const perms = 64
	sigs := make([][perms]uint64, len(examples))
	empty := make([]bool, len(examples))
	leaf := map[string]int{}
	for i, ex := range examples {
		if strings.HasPrefix(ex.Category, "bipia/") && !strings.HasPrefix(ex.Category, "bipia/benign/") {
			if j, ok := leaf[ex.Category]; ok {
				union(i, j)
			} else {
				leaf[ex.Category] = i
			}
		}
		words := strings.FieldsFunc(strings.ToLower(ex.Text), func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f)
		})
		for p := range sigs[i] {
			sigs[i][p] = math.MaxUint64
		}
		empty[i] = len(words) < 3
		for w := 0; w+2 < len(words); w++ {
			h := fnv64(words[w] + " " + words[w+1] + " " + words[w+2])
			for p := range sigs[i] {
				x := h ^ uint64(p)*0x9E3779B97F4A7C15
				x ^= x >> 31
				x *= 0xbf58476d1ce4e5b9
				x ^= x >> 29
				if x < sigs[i][p] {
					sigs[i][p] = x
				}
			}
		}
	}
	for i := range examples {
		if empty[i] {
			continue
		}
		for j := i + 1; j < len(examples); j++ {
			if empty[j] {
				continue
			}
			same := 0
			for p := 0; p < perms; p++ {
				if sigs[i][p] == sigs[j][p] {
					same++
				}
			}
			if float64(same)/perms > 0.4 {
				union(i, j)
			}
		}
	}
	g := make([]int, len(examples))
	for i := range g {
		g[i] = find(i)
	}
	return g
}

// Folds assigns every example one of k folds, grouped (Groups) and
// stratified on Family and label: groups are placed largest first, each in
// the fold that holds the fewest examples of its stratum so far.
func Folds(examples []Example, k int) []int {
	groups := Groups(examples)
	members := map[int][]int{}
	for i, g := range groups {
		members[g] = append(members[g], i)
	}
	ids := make([]int, 0, len(members))
	for g := range members {
		ids = append(ids, g)
	}
	slices.SortFunc(ids, func(a, b int) int {
		if c := cmp.Compare(len(members[b]), len(members[a])); c != 0 {
			return c
		}
		return cmp.Compare(members[a][0], members[b][0])
	})
	stratum := func(i int) string { return Family(examples[i].Category) + "|" + string(rune('0'+examples[i].Label)) }
	perFold := make([]map[string]int, k)
	size := make([]int, k)
	for f := range perFold {
		perFold[f] = map[string]int{}
	}
	fold := make([]int, len(examples))
	for _, g := range ids {
		st := stratum(members[g][0])
		best := 0
		for f := 1; f < k; f++ {
			if perFold[f][st] < perFold[best][st] || perFold[f][st] == perFold[best][st] && size[f] < size[best] {
				best = f
			}
		}
		for _, i := range members[g] {
			fold[i] = best
			perFold[best][stratum(i)]++
		}
		size[best] += len(members[g])
	}
	return fold
}

// ChooseThreshold returns the probability cut-off with the highest recall
// on the positives whose FPR on the negatives is at most maxFPR, placed
// halfway between the last negative it lets through and the next score, so
// it does not sit on a data point. Only examples with use[i] count.
func ChooseThreshold(probs []float64, labels []int, use []bool, maxFPR float64) float64 {
	var neg, pos []float64
	for i, p := range probs {
		if !use[i] {
			continue
		}
		if labels[i] == 1 {
			pos = append(pos, p)
		} else {
			neg = append(neg, p)
		}
	}
	slices.Sort(neg)
	// Allow at most floor(maxFPR*len(neg)) negatives at or above the cut.
	allowed := int(maxFPR * float64(len(neg)))
	if allowed >= len(neg) {
		return 0
	}
	// The cut must be above neg[len-1-allowed].
	lo := neg[len(neg)-1-allowed]
	hi := 1.0
	for _, p := range append(neg, pos...) {
		if p > lo && p < hi {
			hi = p
		}
	}
	return (lo + hi) / 2
}
