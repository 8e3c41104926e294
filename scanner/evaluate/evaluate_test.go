package evaluate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/regex"
	"github.com/promptwall/promptwall/scanner/secrets"
)

func TestReadRows(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Row
		wantErr string // substring; "" means no error
		line    int    // LineError.Line when wantErr is a line error
	}{
		{
			name: "labels, categories, blank lines skipped but counted",
			in:   "{\"text\":\"a\",\"label\":1,\"category\":\"x/y\",\"source\":\"ignored\"}\n\n  \n{\"text\":\"b\",\"label\":0}\n",
			want: []Row{
				{Line: 1, Text: "a", Label: 1, Category: "x/y"},
				{Line: 4, Text: "b", Label: 0},
			},
		},
		{
			name: "span rows: label from spans, type accepted for kind",
			in: `{"text":"mail a@b.io","spans":[{"start":5,"end":11,"type":"EMAIL_ADDRESS"}]}
{"text":"nothing","spans":[]}
{"text":"ok","label":0,"spans":[]}
`,
			want: []Row{
				{Line: 1, Text: "mail a@b.io", Label: 1, HasSpans: true, Spans: []Span{{5, 11, "EMAIL_ADDRESS"}}},
				{Line: 2, Text: "nothing", HasSpans: true, Spans: []Span{}},
				{Line: 3, Text: "ok", HasSpans: true, Spans: []Span{}},
			},
		},
		{name: "malformed JSON", in: "{\"text\":\"a\",\"label\":1}\n{\"text\": \"b\", label: 0}\n", wantErr: "line 2: not a JSON object", line: 2},
		{name: "not an object", in: "[1,2]\n", wantErr: "line 1: not a JSON object", line: 1},
		{name: "missing text", in: "{\"label\":1}\n", wantErr: `line 1: missing "text"`, line: 1},
		{name: "text not a string", in: "{\"text\":5,\"label\":1}\n", wantErr: "line 1:", line: 1},
		{name: "label 2", in: "{\"text\":\"a\",\"label\":0}\n{\"text\":\"a\",\"label\":2}\n", wantErr: `line 2: "label" is 2, want 0 or 1`, line: 2},
		{name: "label as string", in: "{\"text\":\"a\",\"label\":\"1\"}\n", wantErr: `"label" is "1"`, line: 1},
		{name: "label true", in: "{\"text\":\"a\",\"label\":true}\n", wantErr: `"label" is true`, line: 1},
		{name: "no label nor spans", in: "{\"text\":\"a\"}\n", wantErr: `line 1: missing "label"`, line: 1},
		{name: "span past the text", in: "{\"text\":\"abc\",\"spans\":[{\"start\":1,\"end\":9,\"kind\":\"X\"}]}\n", wantErr: "line 1: span 1: end 9 beyond", line: 1},
		{name: "span without kind", in: "{\"text\":\"abc\",\"spans\":[{\"start\":0,\"end\":1}]}\n", wantErr: `span 1: missing "kind"`, line: 1},
		{name: "empty span", in: "{\"text\":\"abc\",\"spans\":[{\"start\":1,\"end\":1,\"kind\":\"X\"}]}\n", wantErr: "want 0 <= start < end", line: 1},
		{name: "no rows", in: "\n\n", wantErr: "no rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadRows(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				var le *LineError
				if tc.line != 0 && (!errors.As(err, &le) || le.Line != tc.line) {
					t.Errorf("error %v: want a LineError for line %d", err, tc.line)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tc.want)
			if string(gj) != string(wj) || len(got) != len(tc.want) {
				t.Fatalf("rows\n got %+v\nwant %+v", got, tc.want)
			}
			for i := range got {
				if got[i].Line != tc.want[i].Line || got[i].HasSpans != tc.want[i].HasSpans {
					t.Errorf("row %d: line %d hasSpans %v, want %d %v", i, got[i].Line, got[i].HasSpans, tc.want[i].Line, tc.want[i].HasSpans)
				}
			}
		})
	}
}

const awsKey = "AKIAZ3MHQ7TX4KD2WQ5N"

// testStages are a secrets scanner in block mode followed by a regex for the
// word "password": in a configured pipeline the block would skip the regex,
// so rows holding both show that each is judged on its own.
func testStages(t *testing.T) []scanner.Stage {
	t.Helper()
	sec, err := secrets.New(secrets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	re, err := regex.New(regex.Config{CaseInsensitive: true, Patterns: []regex.Pattern{
		{Name: "password", Pattern: `\bpassword\b`},
		{Name: "email", Pattern: `[a-z0-9.]+@[a-z0-9.]+\.[a-z]{2,}`, Kind: "EMAIL_ADDRESS"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	off, _ := regex.New(regex.Config{Patterns: []regex.Pattern{{Name: "any", Pattern: `.`}}})
	return []scanner.Stage{
		{Setting: scanner.Setting{ID: "secrets", Enabled: true, Mode: scanner.ModeBlock, Blocking: true}, Scanner: sec},
		{Setting: scanner.Setting{ID: "words", Enabled: true, Mode: scanner.ModeFlag, Blocking: true}, Scanner: re},
		{Setting: scanner.Setting{ID: "off", Enabled: false, Mode: scanner.ModeBlock, Blocking: true}, Scanner: off},
		{Setting: scanner.Setting{ID: "answers", Enabled: true, Mode: scanner.ModeBlock, Blocking: true,
			Directions: []scanner.Direction{scanner.Output}}, Scanner: off},
	}
}

const testRows = `{"text":"my key is ` + awsKey + `","label":1,"category":"secret/aws"}
{"text":"password=` + awsKey + `","label":1,"category":"secret/aws/with-word"}
{"text":"what is a good password policy?","label":0,"category":"prose/question"}
{"text":"The weather is nice today.","label":0,"category":"prose/chat"}
{"text":"AKIA is the prefix of AWS key ids","label":1,"category":"secret/near-miss"}
{"text":"no category here","label":0}
`

func TestRun(t *testing.T) {
	rows, err := ReadRows(strings.NewReader(testRows))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		texts, pos, caught, missed, fp int
		precision, recall, fpr         string // as WriteTable prints them
	}
	tests := []struct {
		name    string
		depth   int
		scanner string
		cat     string // "" is the overall figures
		want    want
	}{
		{name: "secrets overall", scanner: "secrets", want: want{6, 3, 2, 1, 0, "1.000", "0.667", "0.000"}},
		{name: "secrets whole category", scanner: "secrets", cat: "secret/aws/with-word", want: want{1, 1, 1, 0, 0, "1.000", "1.000", "-"}},
		{name: "secrets grouped", depth: 1, scanner: "secrets", cat: "secret", want: want{3, 3, 2, 1, 0, "1.000", "0.667", "-"}},
		{name: "secrets no category", depth: 1, scanner: "secrets", cat: NoCategory, want: want{1, 0, 0, 0, 0, "-", "-", "0.000"}},
		// The regex runs even where secrets blocked: it catches row 2.
		{name: "words overall", scanner: "words", want: want{6, 3, 1, 2, 1, "0.500", "0.333", "0.333"}},
		{name: "words prose", depth: 1, scanner: "words", cat: "prose", want: want{2, 0, 0, 0, 1, "0.000", "-", "0.500"}},
	}
	reports := map[int]*Report{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := reports[tc.depth]
			if rep == nil {
				rep, err = Run(context.Background(), testStages(t), rows, Options{CategoryDepth: tc.depth})
				if err != nil {
					t.Fatal(err)
				}
				reports[tc.depth] = rep
			}
			if rep.Rows != 6 || rep.Positives != 3 || rep.Negatives != 3 {
				t.Errorf("rows %d (+%d -%d), want 6 (+3 -3)", rep.Rows, rep.Positives, rep.Negatives)
			}
			var ids []string
			var c *Counts
			for i := range rep.Scanners {
				s := &rep.Scanners[i]
				ids = append(ids, s.ID)
				if s.ID != tc.scanner {
					continue
				}
				if tc.cat == "" {
					c = &s.Overall
				}
				for j := range s.Categories {
					if s.Categories[j].Category == tc.cat {
						c = &s.Categories[j].Counts
					}
				}
			}
			if strings.Join(ids, ",") != "secrets,words" {
				t.Fatalf("scanners %v: want the enabled input ones, secrets,words", ids)
			}
			if c == nil {
				t.Fatalf("no figures for %s / %q", tc.scanner, tc.cat)
			}
			got := want{c.Texts, c.Positives, c.Caught, c.Missed, c.FalsePositives, frac(c.Precision), frac(c.Recall), frac(c.FalsePositiveRate)}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if c.MeanMicros <= 0 {
				t.Errorf("mean time %v: want > 0", c.MeanMicros)
			}
		})
	}
}

func TestRunSpans(t *testing.T) {
	rows, err := ReadRows(strings.NewReader(`{"text":"mail ann@x.org or bob@y.com","spans":[{"start":5,"end":14,"type":"EMAIL_ADDRESS"},{"start":18,"end":27,"type":"EMAIL_ADDRESS"},{"start":0,"end":4,"type":"PERSON"}]}
{"text":"write to me@z.io please","spans":[{"start":9,"end":15,"type":"EMAIL_ADDRESS"}]}
{"text":"a password and c@d.ee","spans":[]}
`))
	if err != nil {
		t.Fatal(err)
	}
	// Row 2's gold span is off by one, so the match is a miss and a false
	// positive: exact spans are what is scored.
	rep, err := Run(context.Background(), testStages(t), rows, Options{SpanTypes: []string{"regex"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SpanRows != 3 || rep.Positives != 2 {
		t.Errorf("span rows %d positives %d, want 3 2", rep.SpanRows, rep.Positives)
	}
	tests := []struct {
		kind                           string
		gold, pred, caught, missed, fp int
		precision, recall              string
	}{
		{"EMAIL_ADDRESS", 3, 4, 2, 1, 2, "0.500", "0.667"},
		{"PASSWORD", 0, 1, 0, 0, 1, "0.000", "-"},
		{"PERSON", 1, 0, 0, 1, 0, "-", "0.000"},
	}
	var words *ScannerReport
	for i := range rep.Scanners {
		if rep.Scanners[i].ID == "words" {
			words = &rep.Scanners[i]
		} else if len(rep.Scanners[i].Kinds) > 0 {
			t.Errorf("%s is not a span type but has kinds %+v", rep.Scanners[i].ID, rep.Scanners[i].Kinds)
		}
	}
	if words == nil || len(words.Kinds) != len(tests) {
		t.Fatalf("kinds %+v, want %d", words, len(tests))
	}
	for i, tc := range tests {
		k := words.Kinds[i]
		got := []any{k.Kind, k.Gold, k.Predicted, k.Caught, k.Missed, k.FalsePositives, frac(k.Precision), frac(k.Recall)}
		want := []any{tc.kind, tc.gold, tc.pred, tc.caught, tc.missed, tc.fp, tc.precision, tc.recall}
		for j := range got {
			if got[j] != want[j] {
				t.Errorf("kind %s: got %v, want %v", tc.kind, got, want)
				break
			}
		}
	}
}

func TestRunErrors(t *testing.T) {
	rows := []Row{{Line: 1, Text: "x"}}
	if _, err := Run(context.Background(), testStages(t), rows, Options{Direction: "sideways"}); err == nil {
		t.Error("want an error for an unknown direction")
	}
	if _, err := Run(context.Background(), testStages(t)[2:3], rows, Options{}); !errors.Is(err, ErrNoScanners) {
		t.Errorf("only a disabled stage: got %v, want ErrNoScanners", err)
	}
}

func TestRender(t *testing.T) {
	rows, err := ReadRows(strings.NewReader(testRows))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), testStages(t), rows, Options{CategoryDepth: 1})
	if err != nil {
		t.Fatal(err)
	}
	var tbl bytes.Buffer
	if err := rep.WriteTable(&tbl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(tbl.String(), "\n")
	if !strings.HasPrefix(lines[0], "6 rows (3 positive, 3 negative), direction input") {
		t.Errorf("header %q", lines[0])
	}
	head := lines[2]
	for _, l := range lines[3:] {
		if l != "" && len([]rune(l)) != len([]rune(head)) {
			t.Errorf("line not aligned with the header:\n%s\n%s", head, l)
		}
	}
	for _, want := range []string{
		"secrets  all           6          3       2       1   0      1.000   0.667    0.000",
		"         secret        3          3       2       1   0      1.000   0.667        -",
		"words    all           6          3       1       2   1      0.500   0.333    0.333",
		"         prose         2          0       0       0   1      0.000       -    0.500",
	} {
		if !strings.Contains(tbl.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tbl.String())
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows     int `json:"rows"`
		Scanners []struct {
			ID         string
			Overall    map[string]any
			Categories []map[string]any
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Rows != 6 || len(back.Scanners) != 2 || back.Scanners[0].Overall["caught"] != 2.0 {
		t.Fatalf("JSON %s", js.String())
	}
	// An undefined ratio is null, not 0, which would read as measured.
	if c := back.Scanners[0].Categories[len(back.Scanners[0].Categories)-1]; c["category"] != "secret" || c["falsePositiveRate"] != nil {
		t.Errorf("category %v: want secret with a null falsePositiveRate", c)
	}
}
