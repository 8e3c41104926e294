// Package injection is the prompt_injection scanner: it detects prompt
// injection and jailbreak attempts (instruction overrides, DAN and
// developer-mode role-play, system prompt extraction, instructions planted in
// documents, e-mails or code that address the model or its reply) and their
// obfuscated variants.
//
// Design. Everything runs in process from an embedded model of about 40 KB
// (model.bin); nothing is downloaded. A text is judged on its Folded
// view (lowercase, NFKC, confusables, leetspeak and letter spacing folded,
// invisible characters removed), so obfuscation meets the same features as
// plain text, and every encoded payload the Text decodes (base64, hex, URL,
// rot13) is judged again the same way, recursively.
//
// The judge is a logistic regression over two kinds of features:
//
//   - hashed n-grams: word unigrams and bigrams and character 4-grams,
//     hashed into 2^17 buckets, value tf/sqrt(n) (n = feature occurrences
//     in the window); the weights are int8 with one scale. Character 3-
//     and 5-grams and 2^18 buckets were measured too: no better in
//     cross-validation, and two to three times the cost per byte;
//   - phrase rules (rules.go) grouped in families ("instruction override",
//     "jailbreak persona", "system prompt extraction", "reply
//     manipulation", ...): one binary feature per family with a learned
//     weight, so a family that also occurs in benign text earns little.
//     Their hits locate the Matches and name the Reason.
//
// Long texts are scored in overlapping windows (Config.MaxWindow bytes,
// half-window stride) and the best window counts, so a short injection
// buried in a long benign document is not diluted by it. The features of
// all windows are computed in one pass over the text and summed per
// half-window block, so windowing costs nothing extra. Every phrase-rule
// hit is also scored in its own neighbourhood (128 bytes either side).
//
// System messages are not judged by default: the system prompt is the
// operator's own configuration and reads like the instructions this
// scanner looks for (Config.ScanSystem turns them on).
//
// Cost: one pass over the folded text that finds the features, and one
// that turns their weights into running sums, so every window (blocks and
// rule neighbourhoods) is a difference of two sums; no allocation for a clean
// text (the buffers are pooled; see the benchmarks); allocations happen
// only when something is detected or a payload is decoded.
//
// The model is trained by internal/train/injection from the public labelled
// data internal/dataset reads, with the procedure in train.go; the
// package's tests rerun its cross-validation.
package injection

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"sync"

	"github.com/promptwall/promptwall/scanner"
)

// Type is the detector family reported in ScannerResult data.type.
const Type = "injection"

// The kinds of attack a detection is reported as (Match.Kind), each with a
// threshold of its own:
//
//   - KindPlanted: an instruction addressed to the assistant inside content
//     the user pasted or a tool returned (an e-mail, a table, a web page,
//     code), found in the content zone (zone.go);
//   - KindJailbreak: a persona or "no restrictions" attack (DAN, developer
//     mode, role-play that removes the rules);
//   - KindExtraction: an attempt to read the operator's instructions or a
//     secret they guard ("repeat everything above", "what is the password");
//   - KindHijacking: an attempt to override or replace the operator's
//     instructions ("ignore the above and say ...", fake system messages,
//     chat-template tokens, dictating the reply).
const (
	KindPlanted    = "INJECTION_PLANTED"
	KindJailbreak  = "JAILBREAK"
	KindExtraction = "PROMPT_EXTRACTION"
	KindHijacking  = "HIJACKING"
)

// kindOfFamily is the attack kind a rule family's hit in the request zone
// stands for.
var kindOfFamily = [numFamilies]string{
	famOverride:     KindHijacking,
	famJailbreak:    KindJailbreak,
	famUnrestricted: KindJailbreak,
	famPersona:      KindJailbreak,
	famExtraction:   KindExtraction,
	famSecret:       KindExtraction,
	famSecretWord:   KindExtraction,
	famOutput:       KindHijacking,
	famSystemMode:   KindHijacking,
	famExfiltration: KindHijacking,
	famTemplate:     KindHijacking,
	famAddressed:    KindPlanted,
	famPromptWord:   KindExtraction,
	famModeWord:     KindJailbreak,
	famCodeModule:   KindHijacking,
	famTaskSwitch:   KindHijacking,
}

// longAttack is the length in bytes from which a request-zone window that
// no rule explains is reported as a jailbreak (the long role-play templates)
// rather than a hijacking (a short override).
const longAttack = 600

// minWindow is the smallest accepted window: shorter windows see too little
// context for the n-gram weights to mean anything.
const minWindow = 128

// Config configures the scanner.
type Config struct {
	// Threshold is the probability in (0, 1) at or above which a text is
	// detected. Default: the threshold chosen on cross-validated
	// predictions when the model was trained (Model.Threshold), with which
	// a detection that rests on word evidence alone must also reach 0.5
	// (minWordEvidence), and one whose only rule evidence is a persona cue
	// 0.6 (minPersonaEvidence). A threshold set here, or a kind's below,
	// applies to every detection of that kind as it is.
	Threshold float64 `json:"threshold,omitempty"`
	// ScanDecoded screens the payloads the text decodes (base64, hex, URL,
	// rot13), recursively, and reports a detection inside one at the
	// payload's place in the text. Default true.
	ScanDecoded *bool `json:"scan_decoded,omitempty"`
	// MaxWindow is the scoring window in bytes of the folded text: longer
	// texts are scored in windows of this length overlapping by half, and
	// the best window counts. At least 128. Default: the window the model
	// was trained with (1024 for the shipped model).
	MaxWindow int `json:"max_window,omitempty"`
	// PlantedThreshold, JailbreakThreshold, ExtractionThreshold and
	// HijackingThreshold replace Threshold for a detection of that kind
	// (INJECTION_PLANTED, JAILBREAK, PROMPT_EXTRACTION, HIJACKING), each in
	// (0, 1). Default: Threshold.
	PlantedThreshold    float64 `json:"planted_threshold,omitempty"`
	JailbreakThreshold  float64 `json:"jailbreak_threshold,omitempty"`
	ExtractionThreshold float64 `json:"extraction_threshold,omitempty"`
	HijackingThreshold  float64 `json:"hijacking_threshold,omitempty"`
	// ScanSystem screens system messages too. The system prompt is the
	// operator's own text, and a good one reads like the instructions
	// this scanner looks for ("you are ...", "never reveal ..."), so
	// judging it would block the application on its own configuration.
	// Default false: texts with Role system pass unjudged.
	ScanSystem *bool `json:"scan_system,omitempty"`
}

// Scanner detects prompt injection. It is safe for concurrent use.
type Scanner struct {
	model     *Model
	threshold float64
	// kindThreshold is the threshold of each attack kind, and
	// kindWordFloor the least probability of a detection of that kind
	// on word evidence alone (minWordEvidence with the model's own
	// threshold, else 0).
	kindThreshold, kindWordFloor map[string]float64
	decoded                      bool
	window                       int
	system                       bool // judge system messages (Config.ScanSystem)
}

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("injection: invalid config")

//go:embed model.bin
var modelFile []byte

var shipped = sync.OnceValues(func() (*Model, error) {
	m := new(Model)
	if err := m.UnmarshalBinary(modelFile); err != nil {
		return nil, err
	}
	return m, nil
})

// ShippedModel returns the embedded model, decoded on first use.
func ShippedModel() (*Model, error) { return shipped() }

// New validates cfg and builds the scanner with the embedded model.
func New(cfg Config) (*Scanner, error) {
	m, err := shipped()
	if err != nil {
		return nil, err
	}
	return NewWithModel(cfg, m)
}

// NewWithModel builds the scanner with the given model; cfg defaults come
// from the model.
func NewWithModel(cfg Config, m *Model) (*Scanner, error) {
	if m == nil || len(m.w) != 1<<m.spec.bits {
		return nil, fmt.Errorf("%w: no model", ErrConfig)
	}
	// The gloss's word lists are read now rather than by the first text
	// in another language, which would wait for them.
	if _, err := theLexicon(); err != nil {
		return nil, err
	}
	s := &Scanner{model: m, threshold: cfg.Threshold, decoded: true, window: cfg.MaxWindow}
	if s.threshold == 0 {
		s.threshold = m.threshold
	}
	if s.threshold <= 0 || s.threshold >= 1 {
		return nil, fmt.Errorf("%w: threshold must be in (0, 1), got %g", ErrConfig, s.threshold)
	}
	s.kindThreshold, s.kindWordFloor = map[string]float64{}, map[string]float64{}
	for _, k := range []struct {
		kind, option string
		v            float64
	}{
		{KindPlanted, "planted_threshold", cfg.PlantedThreshold},
		{KindJailbreak, "jailbreak_threshold", cfg.JailbreakThreshold},
		{KindExtraction, "extraction_threshold", cfg.ExtractionThreshold},
		{KindHijacking, "hijacking_threshold", cfg.HijackingThreshold},
	} {
		switch {
		case k.v == 0:
			s.kindThreshold[k.kind] = s.threshold
			if cfg.Threshold == 0 {
				s.kindWordFloor[k.kind] = minWordEvidence
			}
		case k.v < 0 || k.v >= 1:
			return nil, fmt.Errorf("%w: %s must be in (0, 1), got %g", ErrConfig, k.option, k.v)
		default:
			s.kindThreshold[k.kind] = k.v
		}
	}
	if cfg.ScanDecoded != nil {
		s.decoded = *cfg.ScanDecoded
	}
	if cfg.ScanSystem != nil {
		s.system = *cfg.ScanSystem
	}
	if s.window == 0 {
		s.window = max(m.window, minWindow)
	}
	if s.window < minWindow {
		return nil, fmt.Errorf("%w: max_window must be at least %d, got %d", ErrConfig, minWindow, s.window)
	}
	return s, nil
}

// Type implements scanner.Scanner.
func (s *Scanner) Type() string { return Type }

// verdict is the best score found in a text or its payloads.
type verdict struct {
	prob float64
	// decision is the score a threshold is held against: prob, or 0 for a
	// window that flags at no threshold (word evidence alone below
	// minWordEvidence, or in a follow-up); the highest over the text and
	// its payloads. Cross-validation chooses the threshold on it, so that
	// the reported figures are those of the detections Scan makes.
	decision float64
	fam      family // strongest rule family of the best window
	hasFam   bool
	kind     string // the attack kind (Kind* constants)
	payload  string // encoding of the payload it was found in, "" for the text
}

// Scan implements scanner.Scanner.
func (s *Scanner) Scan(ctx context.Context, t *scanner.Target) (scanner.Finding, error) {
	if !s.judges(t) {
		return scanner.Finding{}, nil
	}
	var f scanner.Finding
	v, err := s.screen(ctx, t, &f)
	if err != nil {
		return scanner.Finding{}, err
	}
	f.Score = v.prob
	if !f.Detected {
		f.Matches = nil
		return f, nil
	}
	what := fmt.Sprintf("%s, classifier score %.2f", kindReason[v.kind], v.prob)
	if v.hasFam {
		what = fmt.Sprintf("%s (%s), score %.2f", kindReason[v.kind], families[v.fam].reason, v.prob)
	}
	switch v.payload {
	case "":
	case glossPayload:
		what += ", judged on its English gloss"
	default:
		what += " in a " + v.payload + " payload"
	}
	f.Reason = "prompt injection: " + what
	return f, nil
}

// scan judges text and, recursively, its decoded payloads, appending matches
// to f. A payload found in the content zone is content as a whole
// (inContent); any other text is split into its zones. Inside a payload (at >= 0) matches are reported at the payload's
// place at..end in the outermost text, as its own offsets mean nothing there.
func (s *Scanner) scan(ctx context.Context, text *scanner.Text, role scanner.Role, followUp, inContent bool, sc *scratch, f *scanner.Finding, at, end int, payload string) (verdict, error) {
	if err := ctx.Err(); err != nil {
		return verdict{}, fmt.Errorf("injection: %w", err)
	}
	view := text.Folded()
	z, origZone := zone{0, len(view.S)}, zone{0, len(text.Original)}
	if !inContent {
		origZone, z = contentZone(text, view, role)
	}
	ws := s.model.score(view.S, z, s.window, sc)
	// Whether to gloss is decided on this text's words, before the
	// payloads below reuse the scratch; a gloss is never glossed again.
	glossIt := payload == "" && !zonesLookEnglish(view.S, sc.out.toks, z)
	if glossIt {
		// The gloss reuses the walk's words and hashes.
		sc.gloss.walked = append(sc.gloss.walked[:0], sc.out.toks...)
		sc.gloss.walkedWideFrom = sc.out.wideFrom
	}
	v := verdict{prob: sigmoid(ws.margin), payload: payload}
	v.fam, v.hasFam, v.kind = s.model.kindOf(ws, z)
	v.decision = decisionScore(v.prob, wordEvidenceOnly(ws, v.kind, followUp), followUp, s.wordFloor(v.kind, ws.fams))
	if payload == glossPayload && v.kind == KindPlanted {
		// A gloss maps every form of a verb to the one English form
		// that commands ("ignora" and "ignoró" are both "ignore"), so
		// in pasted content, where a notice or a review describes what
		// someone did, a gloss reads as an instruction planted there.
		v.decision = 0
	}
	if v.decision > 0 && v.decision >= s.kindThreshold[v.kind] {
		f.Detected = true
		f.Matches = s.appendMatches(f.Matches, view, ws, sc, v.kind, v.prob, at, end)
	}
	// A gloss's payloads are the text's own, judged already.
	if !s.decoded || payload == glossPayload {
		err := s.judgeGloss(ctx, glossIt, text, view, role, followUp, inContent, sc, f, at, end, &v)
		return v, err
	}
	if at < 0 {
		// Unicode tag characters can spell out ASCII invisibly ("ASCII
		// smuggling"); Canonical drops them, so the hidden text is judged
		// here, as a payload.
		for _, run := range tagRuns(text) {
			sv, err := s.scan(ctx, scanner.NewText(run.text), role, followUp, origZone.has(run.start), sc, f, run.start, run.end, "unicode tag")
			if err != nil {
				return verdict{}, err
			}
			v = higher(v, sv)
		}
	}
	for _, seg := range text.Decoded() {
		a, e := seg.Start, seg.End
		if at >= 0 {
			a, e = at, end
		}
		sv, err := s.scan(ctx, seg.Text, role, followUp, inContent || origZone.has(seg.Start), sc, f, a, e, seg.Encoding)
		if err != nil {
			return verdict{}, err
		}
		v = higher(v, sv)
	}
	err := s.judgeGloss(ctx, glossIt, text, view, role, followUp, inContent, sc, f, at, end, &v)
	return v, err
}

// judgeGloss judges the English gloss of a text in another language
// (gloss.go), when glossIt, and raises v to its verdict where the gloss
// decides more than the text's own words did.
func (s *Scanner) judgeGloss(ctx context.Context, glossIt bool, text *scanner.Text, view *scanner.View, role scanner.Role, followUp, inContent bool, sc *scratch, f *scanner.Finding, at, end int, v *verdict) error {
	if !glossIt {
		return nil
	}
	lx, err := theLexicon()
	if err != nil {
		return err
	}
	// g is a view of sc.gloss's buffer (lexicon.gloss). It is read only
	// until the scan below returns, and nothing writes the buffer before
	// then: that scan is of a gloss, which is never glossed, and the
	// verdict and matches it leaves hold no string of its text
	// (TestGlossLeavesNothingBehind).
	g := lx.gloss(view.S, sc.gloss.walked, sc.gloss.walkedWideFrom, &sc.gloss)
	if g == "" {
		return nil
	}
	a, e := 0, len(text.Original)
	if at >= 0 {
		a, e = at, end
	}
	sv, err := s.scan(ctx, scanner.NewFoldedText(g), role, followUp, inContent, sc, f, a, e, glossPayload)
	if err != nil {
		return err
	}
	// The gloss is a reading, not a payload: it names the verdict only
	// where it decides more than the text's own words did.
	if sv.decision > v.decision {
		*v = higher(*v, sv)
	}
	return nil
}

// decisionScore is the score a threshold is held against for a window of
// probability prob: 0 when it rests on word evidence alone in a follow-up,
// or below floor in a first turn, since such a window flags at no
// threshold; prob otherwise.
func decisionScore(prob float64, wordOnly, followUp bool, floor float64) float64 {
	if wordOnly && (followUp || prob < floor) {
		return 0
	}
	return prob
}

// higher is the verdict of the two with the higher probability, with the
// higher decision score of both.
func higher(v, sv verdict) verdict {
	d := max(v.decision, sv.decision)
	if sv.prob > v.prob {
		v = sv
	}
	v.decision = d
	return v
}

// judges reports whether t is screened at all: the operator's own system
// prompt passes unjudged unless Config.ScanSystem says otherwise.
func (s *Scanner) judges(t *scanner.Target) bool {
	return t.Role != scanner.RoleSystem || s.system
}

// screen judges t, which the scanner judges (judges), appending its
// matches to f.
func (s *Scanner) screen(ctx context.Context, t *scanner.Target, f *scanner.Finding) (verdict, error) {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	return s.scan(ctx, t.Text, t.Role, t.FollowsAnswer && t.Role == scanner.RoleUser, false, sc, f, -1, -1, "")
}

// screenDecision screens t as Scan does and returns the score its threshold
// is held against (verdict.decision).
func (s *Scanner) screenDecision(ctx context.Context, t *scanner.Target) (float64, error) {
	if !s.judges(t) {
		return 0, nil
	}
	var f scanner.Finding
	v, err := s.screen(ctx, t, &f)
	return v.decision, err
}

// minWordEvidence is the least probability at which a detection resting on
// word evidence alone (wordEvidenceOnly) flags a first turn with the
// model's own threshold: such a window must make an attack more likely
// than not. The threshold is where 1% of the labelled benign texts score,
// and it moves
// with every refit (0.31 to 0.45 over the fits of 2026-11-26); the short
// everyday requests no rule explains ("Please do not use commas in your
// response", "What is the capital of Australia, and why isn't it
// Sydney?") score 0.3 to 0.6 and moved with it. In cross-validation at a
// threshold of 0.31, 9 of 384 attacks and 1 benign text were caught on word
// evidence alone in the request zone, and none of the 9 scored below 0.5.
// Cross-validation scores a text by its decision score (verdict.decision),
// so the threshold is chosen for the detections the floor leaves.
const minWordEvidence = 0.5

// minPersonaEvidence is the least probability at which a detection whose
// only rule evidence is a persona cue ("pretend to be", "from now on you
// are", "stay in character", beside bare mentions) counts, with the
// model's own threshold. A persona switch is how most role-play starts
// ("Pretend you're a barista on a rainy morning. Stay in character"); a
// jailbreak needs more than one, and the rules that find the rest (an
// override, restrictions lifted, a jailbreak persona's name) make its
// window a rule window, which this floor leaves alone. Measured on the
// model of 2026-11-26: role-play requests flagged on the read and
// decision sets 7 fewer (of 10, 4 of them in everyday_roleplay4's 8),
// attacks caught 5 fewer (1 of 90 in English, 4 persona hijacks in other
// languages), cross-validated recall at 1% 0.909 -> 0.906 on the shipped
// order with the same threshold; 0.55 removed 3 and 1, 0.65 10 and 7.
const minPersonaEvidence = 0.6

// wordFloor is the least probability of a detection of kind resting on
// the rule families fams of its window, where it rests on word evidence
// (wordEvidenceOnly).
func (s *Scanner) wordFloor(kind string, fams uint32) float64 {
	f := s.kindWordFloor[kind]
	if f > 0 && sizeRow(fams) == rowPersona {
		return max(f, minPersonaEvidence)
	}
	return f
}

// wordEvidenceOnly reports whether a detection of kind rests on the
// model's word evidence alone, in the user's own request: no rule explains
// its window and it is no instruction planted in content. A follow-up turn
// (scanner.Target.FollowsAnswer) is addressed to the assistant about its
// own previous answer ("Rewrite your previous response. Start every
// sentence with the letter A.", "Critique your own response."), an
// ordinary request in the words a hijacker uses, so there such evidence
// flags nothing; a rule-identified attack (an override, an extraction, a
// jailbreak persona, a privilege claim, chat template tokens) and a
// planted instruction still do. In a follow-up a persona cue and a task
// switch are word evidence too: "Stay in character as the interviewer"
// continues the role-play the user set up, and "New task: forget the
// email, draft a birthday message" replaces the user's own task.
func wordEvidenceOnly(ws windowScore, kind string, followUp bool) bool {
	fams := ws.fams
	if followUp {
		fams &^= 1<<famPersona | 1<<famTaskSwitch
	}
	return kind != KindPlanted && sizeRow(fams) != rowRule
}

// kindReason words each attack kind for Finding.Reason.
var kindReason = map[string]string{
	KindPlanted:    "instruction planted in content",
	KindJailbreak:  "jailbreak",
	KindExtraction: "prompt extraction",
	KindHijacking:  "hijacking",
}

// kindOf names the attack kind of the best window of a text whose content
// zone is z, with the strongest rule family hit inside it.
// The strongest family decides: hit in the content zone, the window is a
// planted instruction whatever it says; hit in the request zone, its kind
// (kindOfFamily). A window no rule explains is planted when it lies mostly
// in the content zone, else a jailbreak when long and a hijacking when short.
func (m *Model) kindOf(ws windowScore, z zone) (fam family, hasFam bool, kind string) {
	var best float32
	inContent := false
	for f := family(0); f < numFamilies; f++ {
		if ws.fams&(1<<f) != 0 && (!hasFam || m.fam[f] > best) {
			best, fam, hasFam, inContent = m.fam[f], f, true, false
		}
		if ws.fams&(1<<(zoneShift+f)) != 0 && (!hasFam || m.famZone[f] > best) {
			best, fam, hasFam, inContent = m.famZone[f], f, true, true
		}
	}
	switch {
	case hasFam && inContent:
		return fam, true, KindPlanted
	case hasFam:
		return fam, true, kindOfFamily[fam]
	case 2*z.overlap(ws.start, ws.end) > ws.end-ws.start:
		return fam, false, KindPlanted
	case ws.end-ws.start >= longAttack:
		return fam, false, KindJailbreak
	}
	return fam, false, KindHijacking
}

// tagRun is a run of tag characters spelling ASCII text.
type tagRun struct {
	start, end int
	text       string
}

// minTagRun is the shortest tag-character run judged as hidden text; flag
// emoji sequences use a handful of tag characters legitimately.
const minTagRun = 8

// tagRuns decodes the runs of Unicode tag characters (U+E0020..U+E007E,
// the printable ASCII block shifted) in text; Invisible reports each run as
// one span. Nothing is allocated unless the text has such a run.
func tagRuns(text *scanner.Text) []tagRun {
	var runs []tagRun
	for _, m := range text.Invisible() {
		if m.Kind != scanner.KindTagCharacter || m.End-m.Start < 4*minTagRun {
			continue
		}
		b := make([]byte, 0, (m.End-m.Start)/4)
		for _, r := range text.Original[m.Start:m.End] {
			if r >= 0xE0020 && r <= 0xE007E {
				b = append(b, byte(r-0xE0000))
			}
		}
		if len(b) >= minTagRun {
			runs = append(runs, tagRun{start: m.Start, end: m.End, text: string(b)})
		}
	}
	return runs
}

// appendMatches locates a detection: the phrase-rule hits inside the best
// window whose family weighs for injection, or else the window itself. In a
// payload the whole payload is the match.
func (s *Scanner) appendMatches(ms []scanner.Match, view *scanner.View, ws windowScore, sc *scratch, kind string, prob float64, at, end int) []scanner.Match {
	if at >= 0 {
		return append(ms, scanner.Match{Start: at, End: end, Kind: kind, Score: prob})
	}
	n := len(ms)
	for _, h := range sc.hits {
		from, to := int(sc.out.toks[h.from].start), int(sc.out.toks[h.to-1].end)
		if from < ws.start || from >= ws.end || s.model.fam[h.fam] <= 0 {
			continue
		}
		a, e := view.Span(from, to)
		// Rules of one family often match overlapping phrases
		// ("ignore all previous", "ignore all previous instructions"):
		// report their union once.
		if k := len(ms) - 1; k >= n && a <= ms[k].End {
			ms[k].End = max(ms[k].End, e)
			continue
		}
		ms = append(ms, scanner.Match{Start: a, End: e, Kind: kind, Score: prob})
	}
	if len(ms) == n {
		a, e := view.Span(ws.start, ws.end)
		ms = append(ms, scanner.Match{Start: a, End: e, Kind: kind, Score: prob})
	}
	return ms
}

var _ scanner.Scanner = (*Scanner)(nil)
