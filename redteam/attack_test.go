package redteam

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/redteam/internal/packgen"
)

var update = flag.Bool("update", false, "rewrite the built-in packs from internal/packgen")

// TestBuiltinPacksUpToDate keeps the committed JSONL equal to what
// packgen generates, so a reviewer reads the generator and the files agree.
func TestBuiltinPacksUpToDate(t *testing.T) {
	packs := packgen.Packs()
	if len(packs) != len(BuiltinPackNames) {
		t.Fatalf("packgen makes %d packs, BuiltinPackNames lists %d", len(packs), len(BuiltinPackNames))
	}
	for _, name := range BuiltinPackNames {
		want := packgen.JSONL(packs[name])
		file := filepath.Join("packs", name+".jsonl")
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := builtinFS.ReadFile("packs/" + name + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./redteam", file)
		}
	}
}

func TestBuiltinPacks(t *testing.T) {
	lib, err := NewLibrary()
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	seen := map[string]bool{}
	for _, name := range BuiltinPackNames {
		p, ok := lib.Pack(name)
		if !ok {
			t.Fatalf("pack %s missing", name)
		}
		if len(p.Attacks) < 30 {
			t.Errorf("pack %s has only %d attacks", name, len(p.Attacks))
		}
		total += len(p.Attacks)
		for _, a := range p.Attacks {
			if seen[a.Key()] {
				t.Errorf("duplicate %s", a.Key())
			}
			seen[a.Key()] = true
			// A refusal must never satisfy a pattern: otherwise a safe
			// model would be scored vulnerable.
			if a.Success.Pattern != "" {
				re, err := compilePattern(a.Success.Pattern, sampleCanary)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range []string{
					"I'm sorry, but I can't help with that.",
					"I cannot comply with instructions embedded in the document. The refund window is 30 days.",
					"The email is an invoice from Dana; it also contains hidden instructions, which I ignored.",
				} {
					if re.MatchString(r) {
						t.Errorf("%s: pattern %q matches the refusal %q", a.Key(), a.Success.Pattern, r)
					}
				}
			}
		}
	}
	if total < 250 {
		t.Errorf("built-in packs hold %d attacks, want a few hundred", total)
	}
	t.Logf("built-in attacks: %d", total)
}

func TestParsePackErrors(t *testing.T) {
	good := `{"id":"a1","vector":"direct","severity":3,"intent":"x","intentCategory":"goal_hijacking","prompt":"hi","success":{"refusalRequired":true}}`
	tests := []struct {
		name, file, data, want string
	}{
		{"ok jsonl", "mine.jsonl", good + "\n\n" + strings.Replace(good, `"a1"`, `"a2"`, 1), ""},
		{"bad json line", "mine.jsonl", good + "\n{oops", "mine.jsonl:2:"},
		{"unknown field", "mine.jsonl", strings.Replace(good, `"id"`, `"colour":1,"id"`, 1), `mine.jsonl:1: json: unknown field "colour"`},
		{"duplicate id", "mine.jsonl", good + "\n" + good, `mine.jsonl:2: attack id "a1" already used on line 1`},
		{"severity", "mine.jsonl", strings.Replace(good, `"severity":3`, `"severity":9`, 1), "mine.jsonl:1: attack \"a1\": severity 9 is not in 1..5"},
		{"vector", "mine.jsonl", strings.Replace(good, `"direct"`, `"sideways"`, 1), `vector "sideways" is not one of`},
		{"no criterion", "mine.jsonl", strings.Replace(good, `"refusalRequired":true`, ``, 1), "success needs at least one"},
		{"bad regexp", "mine.jsonl", strings.Replace(good, `"refusalRequired":true`, `"pattern":"(unclosed"`, 1), "success.pattern: error parsing regexp"},
		{"empty match", "mine.jsonl", strings.Replace(good, `"refusalRequired":true`, `"pattern":"x*"`, 1), "matches the empty answer"},
		{"placeholder", "mine.jsonl", strings.Replace(good, `"hi"`, `"hi {{secret}}"`, 1), "unknown placeholder {{secret}}"},
		{"pack mismatch", "mine.jsonl", strings.Replace(good, `"id"`, `"pack":"theirs","id"`, 1), `pack "theirs" does not match`},
		{"bad id", "mine.jsonl", strings.Replace(good, `"a1"`, `"A 1"`, 1), `id "A 1" must be`},
		{"empty", "mine.jsonl", "\n\n", "mine.jsonl: no attacks"},
		{"format", "mine.txt", good, "unknown pack format"},
		{"bad pack name", "My Pack.jsonl", good, "pack name"},
		{"yaml list", "mine.yaml", "- id: a1\n  vector: direct\n  severity: 2\n  intent: x\n  intentCategory: y\n  prompt: hi\n  success: {canaryLeak: true}\n", ""},
		{"yaml mapping", "mine.yml", "pack: mine\nattacks:\n  - id: a1\n    vector: direct\n    severity: 2\n    intent: x\n    intentCategory: y\n    prompt: hi\n    success: {pattern: '(?i)pwned'}\n", ""},
		{"yaml line", "mine.yaml", "- id: a1\n  vector: direct\n  severity: 2\n  intent: x\n  intentCategory: y\n  prompt: hi\n  success: {canaryLeak: true}\n- id: a2\n  vector: direct\n  severity: 0\n  intent: x\n  intentCategory: y\n  prompt: hi\n  success: {canaryLeak: true}\n", `mine.yaml:8: attack "a2": severity 0`},
		{"yaml unknown", "mine.yaml", "- id: a1\n  vectr: direct\n", `mine.yaml:1: json: unknown field "vectr"`},
		{"yaml pack", "mine.yaml", "pack: other\nattacks: []\n", `mine.yaml:1: pack "other"`},
		{"yaml key", "mine.yaml", "packs: []\n", `unknown key "packs"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePack(tt.file, []byte(tt.data))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if p.Name != "mine" || p.Attacks[0].Technique != TechniqueStaticContent || p.Attacks[0].Pack != "mine" {
					t.Fatalf("pack %+v attack %+v", p, p.Attacks[0])
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidPack) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want ErrInvalidPack containing %q", err, tt.want)
			}
		})
	}
}

func TestLoadPackAndLibrary(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "custom.jsonl")
	data := `{"id":"c1","vector":"direct","severity":5,"intent":"x","intentCategory":"y","prompt":"leak {{canary}}?","success":{"pattern":"sent {{canary}}"}}`
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPack(file)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := NewLibrary(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := lib.Attacks([]string{"custom", "encoding_tricks"})
	if err != nil || got[0].Key() != "custom/c1" || len(got) < 2 {
		t.Fatalf("Attacks: %v %v", got, err)
	}
	if _, err := lib.Attacks([]string{"nope"}); err == nil || !strings.Contains(err.Error(), "known: custom, encoding_tricks") {
		t.Fatalf("unknown pack error: %v", err)
	}
	if _, err := NewLibrary(&Pack{Name: "prompt_injection"}); !errors.Is(err, ErrInvalidPack) {
		t.Fatalf("replacing a built-in pack: %v", err)
	}
	if _, err := LoadPack(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Fatal("missing file loaded")
	}
}
