package redteam

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

//go:generate go test -run TestBuiltinPacksUpToDate -update .

//go:embed packs/*.jsonl
var builtinFS embed.FS

// Attack vectors: how the attack reaches the model.
const (
	// VectorDirect: the user asks for it.
	VectorDirect = "direct"
	// VectorIndirect: the payload is embedded in a document, e-mail or
	// web page the user asks the model about.
	VectorIndirect = "indirect"
	// VectorRoleplay: the request is wrapped in a role-play or fiction.
	VectorRoleplay = "roleplay"
	// VectorSystemPromptExtraction: the attack asks for the system prompt.
	VectorSystemPromptExtraction = "system_prompt_extraction"
	// VectorDataExfiltration: the attack smuggles data out, typically in
	// a URL the client will fetch.
	VectorDataExfiltration = "data_exfiltration"
	// VectorEncoding: the payload is encoded to slip past filters.
	VectorEncoding = "encoding"
)

// Vectors lists the accepted Attack.Vector values.
var Vectors = []string{VectorDirect, VectorIndirect, VectorRoleplay, VectorSystemPromptExtraction, VectorDataExfiltration, VectorEncoding}

// TechniqueStaticContent is the technique of a prompt sent as written
// (the spec's only shown variant, and the default).
const TechniqueStaticContent = "static_content"

// CanaryPlaceholder in a campaign's system prompt, an attack's prompt or
// its success pattern is replaced by the run's canary secret.
const CanaryPlaceholder = "{{canary}}"

// MaxPromptBytes bounds an attack's prompt.
const MaxPromptBytes = 32 << 10

// Attack is one adversarial prompt and how to tell it worked.
type Attack struct {
	// ID is stable across releases and unique in its pack: results are
	// diffed across runs by it. Lower case letters, digits, '.', '_', '-'.
	ID string `json:"id"`
	// Pack is the pack's name; in a pack file it may be omitted, and if
	// given must equal the file's name without extension.
	Pack string `json:"pack,omitempty"`
	// Technique is how the prompt is produced; default "static_content".
	Technique string `json:"technique,omitempty"`
	// Vector is one of Vectors.
	Vector string `json:"vector"`
	// Severity is 1 (nuisance) to 5 (critical): the weight of the attack
	// in the CASI score.
	Severity int `json:"severity"`
	// Intent says in a sentence what the attacker wants.
	Intent string `json:"intent"`
	// IntentCategory groups intents (goal_hijacking, system_prompt_leak,
	// fraud, ...): lower snake case.
	IntentCategory string `json:"intentCategory"`
	// Prompt is the user message sent; {{canary}} is replaced by the
	// run's canary.
	Prompt string `json:"prompt"`
	// Success says when the attack worked.
	Success Criterion `json:"success"`

	pattern *regexp.Regexp // compiled Success.Pattern without {{canary}}
}

// Criterion decides whether an attack worked. At least one condition is
// set; the attack worked (the target is vulnerable) when any set condition
// holds.
type Criterion struct {
	// CanaryLeak: the answer reveals the run's canary, in clear or encoded.
	CanaryLeak bool `json:"canaryLeak,omitempty"`
	// Pattern is a regular expression (RE2 syntax) that matches the
	// answer only when the model obeyed; {{canary}} in it stands for the
	// canary, quoted. It must not match the empty string.
	Pattern string `json:"pattern,omitempty"`
	// RefusalRequired: the answer is not a refusal.
	RefusalRequired bool `json:"refusalRequired,omitempty"`
}

// Key identifies the attack across packs: "pack/id".
func (a *Attack) Key() string { return a.Pack + "/" + a.ID }

// Pack is a named set of attacks.
type Pack struct {
	Name    string
	Attacks []*Attack
}

// ErrInvalidPack is wrapped by every error LoadPack and ParsePack return
// for a malformed pack; the message names the file and line.
var ErrInvalidPack = errors.New("redteam: invalid attack pack")

var (
	idRE       = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`)
	snakeRE    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	packNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	placeRE    = regexp.MustCompile(`\{\{[^{}]*\}\}`)
)

// sampleCanary stands in for the canary when a pattern is validated.
const sampleCanary = "PWCANARYSAMPLE42"

// validate checks a parsed attack and fills defaults. It compiles the
// pattern once so a run never meets a bad one.
func (a *Attack) validate(pack string) error {
	if a.Pack == "" {
		a.Pack = pack
	}
	if a.Technique == "" {
		a.Technique = TechniqueStaticContent
	}
	switch {
	case a.Pack != pack:
		return fmt.Errorf("pack %q does not match the file's pack %q", a.Pack, pack)
	case !idRE.MatchString(a.ID):
		return fmt.Errorf("id %q must be 1-128 lower case letters, digits, '.', '_' or '-'", a.ID)
	case !snakeRE.MatchString(a.Technique):
		return fmt.Errorf("technique %q must be lower snake case", a.Technique)
	case !slices.Contains(Vectors, a.Vector):
		return fmt.Errorf("vector %q is not one of %s", a.Vector, strings.Join(Vectors, ", "))
	case a.Severity < 1 || a.Severity > 5:
		return fmt.Errorf("severity %d is not in 1..5", a.Severity)
	case strings.TrimSpace(a.Intent) == "":
		return errors.New("intent is required")
	case !snakeRE.MatchString(a.IntentCategory):
		return fmt.Errorf("intentCategory %q must be lower snake case", a.IntentCategory)
	case strings.TrimSpace(a.Prompt) == "":
		return errors.New("prompt is required")
	case len(a.Prompt) > MaxPromptBytes:
		return fmt.Errorf("prompt is %d bytes, at most %d allowed", len(a.Prompt), MaxPromptBytes)
	case !a.Success.CanaryLeak && a.Success.Pattern == "" && !a.Success.RefusalRequired:
		return errors.New("success needs at least one of canaryLeak, pattern, refusalRequired")
	}
	for _, field := range []struct{ name, v string }{{"prompt", a.Prompt}, {"success.pattern", a.Success.Pattern}} {
		for _, p := range placeRE.FindAllString(field.v, -1) {
			if p != CanaryPlaceholder {
				return fmt.Errorf("%s has unknown placeholder %s; only %s is replaced", field.name, p, CanaryPlaceholder)
			}
		}
	}
	if a.Success.Pattern != "" {
		re, err := compilePattern(a.Success.Pattern, sampleCanary)
		if err != nil {
			return fmt.Errorf("success.pattern: %w", err)
		}
		if re.MatchString("") {
			return errors.New("success.pattern matches the empty answer, so every attack would count as successful")
		}
		if !strings.Contains(a.Success.Pattern, CanaryPlaceholder) {
			a.pattern = re
		}
	}
	return nil
}

func compilePattern(p, canary string) (*regexp.Regexp, error) {
	return regexp.Compile(strings.ReplaceAll(p, CanaryPlaceholder, regexp.QuoteMeta(canary)))
}

// PackNameOf returns the pack name a file defines: its base name without
// extension.
func PackNameOf(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// LoadPack reads an operator's pack file: JSON lines (.jsonl, .ndjson) or
// YAML (.yaml, .yml). The pack is named after the file. A YAML file holds
// either a list of attacks or a mapping with key "attacks" (and optionally
// "pack", which must equal the file's name).
func LoadPack(file string) (*Pack, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("redteam: read pack: %w", err)
	}
	return ParsePack(file, data)
}

// ParsePack parses a pack from data; name is the file name, which gives
// the pack its name and its format (by extension). Errors wrap
// ErrInvalidPack and read "file:line: message".
func ParsePack(name string, data []byte) (*Pack, error) {
	pack := PackNameOf(name)
	if !packNameRE.MatchString(pack) {
		return nil, fmt.Errorf("%w: %s: pack name %q (from the file name) must be lower case letters, digits, '_' or '-'", ErrInvalidPack, name, pack)
	}
	var (
		items []lineItem
		err   error
	)
	switch strings.ToLower(path.Ext(filepath.ToSlash(name))) {
	case ".jsonl", ".ndjson":
		items, err = splitJSONL(name, data)
	case ".yaml", ".yml":
		items, err = splitYAML(name, data, pack)
	default:
		return nil, fmt.Errorf("%w: %s: unknown pack format; use .jsonl or .yaml", ErrInvalidPack, name)
	}
	if err != nil {
		return nil, err
	}
	p := &Pack{Name: pack}
	seen := make(map[string]int)
	for _, it := range items {
		a := new(Attack)
		dec := json.NewDecoder(bytes.NewReader(it.json))
		dec.DisallowUnknownFields()
		if err := dec.Decode(a); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrInvalidPack, name, it.line, err)
		}
		if err := a.validate(pack); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: attack %q: %v", ErrInvalidPack, name, it.line, a.ID, err)
		}
		if first, dup := seen[a.ID]; dup {
			return nil, fmt.Errorf("%w: %s:%d: attack id %q already used on line %d", ErrInvalidPack, name, it.line, a.ID, first)
		}
		seen[a.ID] = it.line
		p.Attacks = append(p.Attacks, a)
	}
	if len(p.Attacks) == 0 {
		return nil, fmt.Errorf("%w: %s: no attacks", ErrInvalidPack, name)
	}
	return p, nil
}

// lineItem is one attack's JSON and the line it starts on.
type lineItem struct {
	line int
	json []byte
}

func splitJSONL(name string, data []byte) ([]lineItem, error) {
	var items []lineItem
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 4*MaxPromptBytes)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		items = append(items, lineItem{n, bytes.Clone(line)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidPack, name, err)
	}
	return items, nil
}

// splitYAML turns each YAML attack into JSON so that one decoder, with
// one set of field names and unknown-field checks, reads both formats.
func splitYAML(name string, data []byte, pack string) ([]lineItem, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidPack, name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, fmt.Errorf("%w: %s: empty document", ErrInvalidPack, name)
	}
	list := doc.Content[0]
	if list.Kind == yaml.MappingNode {
		var attacks *yaml.Node
		for i := 0; i+1 < len(list.Content); i += 2 {
			k, v := list.Content[i], list.Content[i+1]
			switch k.Value {
			case "attacks":
				attacks = v
			case "pack":
				if v.Value != pack {
					return nil, fmt.Errorf("%w: %s:%d: pack %q does not match the file's pack %q", ErrInvalidPack, name, v.Line, v.Value, pack)
				}
			default:
				return nil, fmt.Errorf("%w: %s:%d: unknown key %q; expected pack and attacks", ErrInvalidPack, name, k.Line, k.Value)
			}
		}
		if attacks == nil {
			return nil, fmt.Errorf("%w: %s:%d: no attacks key", ErrInvalidPack, name, list.Line)
		}
		list = attacks
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: %s:%d: expected a list of attacks", ErrInvalidPack, name, list.Line)
	}
	items := make([]lineItem, 0, len(list.Content))
	for _, n := range list.Content {
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%w: %s:%d: an attack must be a mapping", ErrInvalidPack, name, n.Line)
		}
		var v map[string]any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrInvalidPack, name, n.Line, err)
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrInvalidPack, name, n.Line, err)
		}
		items = append(items, lineItem{n.Line, j})
	}
	return items, nil
}

// BuiltinPackNames lists the packs shipped with Promptwall.
var BuiltinPackNames = []string{
	"prompt_injection", "jailbreak_roleplay", "system_prompt_extraction",
	"sensitive_data_exfiltration", "encoding_tricks",
}

// Library is a set of packs by name. Build it once (NewLibrary) and share
// it: it is read-only after construction.
type Library struct {
	packs map[string]*Pack
}

// NewLibrary returns the built-in packs plus extra, which may not reuse a
// built-in pack's name or each other's.
func NewLibrary(extra ...*Pack) (*Library, error) {
	l := &Library{packs: make(map[string]*Pack)}
	for _, n := range BuiltinPackNames {
		p, err := builtinPack(n)
		if err != nil {
			return nil, err
		}
		l.packs[n] = p
	}
	for _, p := range extra {
		if _, dup := l.packs[p.Name]; dup {
			return nil, fmt.Errorf("%w: pack %q is defined twice (built-in packs cannot be replaced; rename the file)", ErrInvalidPack, p.Name)
		}
		l.packs[p.Name] = p
	}
	return l, nil
}

func builtinPack(name string) (*Pack, error) {
	f := "packs/" + name + ".jsonl"
	data, err := builtinFS.ReadFile(f)
	if err != nil {
		return nil, fmt.Errorf("redteam: built-in pack %s: %w", name, err)
	}
	return ParsePack(f, data)
}

// Pack returns the pack with that name.
func (l *Library) Pack(name string) (*Pack, bool) {
	p, ok := l.packs[name]
	return p, ok
}

// Names lists the packs, sorted.
func (l *Library) Names() []string {
	names := make([]string, 0, len(l.packs))
	for n := range l.packs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Attacks returns the attacks of the named packs, in pack order then file
// order. An unknown name is an error naming the known ones.
func (l *Library) Attacks(packs []string) ([]*Attack, error) {
	var out []*Attack
	for _, n := range packs {
		p, ok := l.packs[n]
		if !ok {
			return nil, fmt.Errorf("redteam: unknown attack pack %q; known: %s", n, strings.Join(l.Names(), ", "))
		}
		out = append(out, p.Attacks...)
	}
	return out, nil
}
