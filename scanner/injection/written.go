package injection

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/promptwall/promptwall/internal/jsonl"
)

// This file reads the sets written for Promptwall (scanner/injection/testdata):
// the test sets the quality tests measure on and the ones the shipped model
// is trained on besides the public data.

// Attack is one line of an attacks file: "KIND<tab>text", where a text
// that spans lines is written on one with the two characters `\n` for each
// break.
type Attack struct {
	Kind, Text string
}

// ReadAttacks reads an attacks file.
func ReadAttacks(path string) ([]Attack, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Attack
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		kind, text, ok := strings.Cut(sc.Text(), "\t")
		if !ok || text == "" {
			return nil, fmt.Errorf("%s:%d: want KIND<tab>text", path, line)
		}
		out = append(out, Attack{Kind: kind, Text: strings.ReplaceAll(text, `\n`, "\n")})
	}
	return out, sc.Err()
}

// Turn is one benign user message of an everyday file; Turn 2 and later
// follow an answer of the assistant.
type Turn struct {
	Text string `json:"text"`
	Turn int    `json:"turn"`
}

// ReadTurns reads an everyday file (JSON Lines {"text", "turn"}; a missing
// turn is a first turn).
func ReadTurns(path string) ([]Turn, error) {
	turns, err := jsonl.Read[Turn](path)
	for i := range turns {
		turns[i].Turn = max(turns[i].Turn, 1)
	}
	return turns, err
}

// TrainingSets are the written sets, in testdata, the shipped model is
// trained on besides the public data: the hand-written examples, and the
// attack and hard everyday sets whose misses and false positives had been
// read to write rules, so that they could no longer measure anything
// unseen. Their attacks are positives; of their everyday files only the
// first turns are negatives, since an example is judged as a first turn.
// A written set of role-play requests ("From now on you are a sommelier
// ... Stay in character") is negatives: the public data has almost no
// benign text with a persona cue, so a cue alone read as a jailbreak.
// They are trained on in every fold and never scored: no reported figure
// rests on them. The sets still unread (attacks_fresh5, 8 and 9, their
// everyday files, everyday_roleplay2 and 3) are the test sets.
var TrainingSets = []string{
	"handwritten.jsonl",
	"attacks_fresh2.txt", "everyday_fresh2.jsonl",
	"attacks_fresh3.txt", "everyday_fresh3.jsonl",
	"attacks_fresh4.txt", "everyday_fresh4.jsonl",
	"attacks_fresh6.txt", "everyday_fresh6.jsonl",
	"attacks_fresh7.txt", "everyday_fresh7.jsonl",
	"everyday_roleplay.jsonl",
}

// ReadTrainingSets reads TrainingSets from dir as training examples.
func ReadTrainingSets(dir string) ([]Example, error) {
	var out []Example
	for _, name := range TrainingSets {
		path := filepath.Join(dir, name)
		set := strings.TrimSuffix(name, filepath.Ext(name))
		switch {
		case strings.HasPrefix(name, "attacks_"):
			attacks, err := ReadAttacks(path)
			if err != nil {
				return nil, err
			}
			for _, a := range attacks {
				out = append(out, Example{Text: a.Text, Label: 1, Category: "written/" + set + "/" + strings.ToLower(a.Kind)})
			}
		case strings.HasPrefix(name, "everyday_"):
			turns, err := ReadTurns(path)
			if err != nil {
				return nil, err
			}
			for _, t := range turns {
				if t.Turn == 1 {
					out = append(out, Example{Text: t.Text, Category: "written/" + set})
				}
			}
		default:
			examples, err := jsonl.Read[Example](path)
			if err != nil {
				return nil, err
			}
			out = append(out, examples...)
		}
	}
	return out, nil
}
