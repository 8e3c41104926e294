package code

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/internal/dataset"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/internal/scannertest"
)

// span is an expected match: the matched text must contain from and end
// with to (trailing whitespace ignored), and carry kind.
type span struct {
	kind     string
	from, to string
}

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		text string
		want []span
	}{
		{"prose", Config{}, "Please summarise the attached report for the board.\nList three risks, with owners (and dates).\nThanks!", nil},
		{"markdown list", Config{}, "Steps:\n- open the app\n- click save\n  - then close it\n1. done", nil},
		{"markdown table", Config{}, "| a | b = c |\n|---|---|\n| f(x) | {1} |", nil},
		{"single code-looking line below MinLines", Config{}, "Run this: x = foo(y);\nthanks", nil},
		{"fenced go", Config{}, "Fix this:\n```go\nfunc main() {}\n```\nplease", []span{{"CODE_GO", "```go", "```"}}},
		{"fenced no info classified", Config{}, "```\ndef f(self):\n    return None\n```", []span{{"CODE_PYTHON", "```", "```"}}},
		{"fenced unknown info", Config{}, "~~~text\nhello\n~~~", []span{{"CODE", "~~~text", "~~~"}}},
		{"unclosed fence", Config{}, "see\n```js\nconsole.log(1)", []span{{"CODE_JAVASCRIPT", "```js", "console.log(1)"}}},
		{"python", Config{}, "Why does this fail?\n\ndef load(path):\n    with open(path) as f:\n        data = json.load(f)\n    return data\n\nIt raises an error.",
			[]span{{"CODE_PYTHON", "def load", "return data"}}},
		{"go unfenced", Config{}, "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tx := 1\n\tfmt.Println(x)\n}\n",
			[]span{{"CODE_GO", "package main", "}"}}},
		{"javascript", Config{}, "const x = require('fs');\nfunction read(p) {\n  return x.readFileSync(p, 'utf8');\n}\nconsole.log(read('a'));",
			[]span{{"CODE_JAVASCRIPT", "const x", "console.log(read('a'));"}}},
		{"typescript", Config{}, "interface User {\n  name: string;\n  age: number;\n}\nconst u: User = { name: 'a', age: 1 };",
			[]span{{"CODE_TYPESCRIPT", "interface User", "age: 1 };"}}},
		{"java", Config{}, "public class Main {\n  public static void main(String[] args) {\n    System.out.println(\"hi\");\n  }\n}",
			[]span{{"CODE_JAVA", "public class", "}"}}},
		{"c", Config{}, "#include <stdio.h>\nint main(void) {\n  printf(\"hi\\n\");\n  return 0;\n}",
			[]span{{"CODE_C", "#include", "}"}}},
		{"cpp", Config{}, "#include <iostream>\nint main() {\n  std::cout << \"hi\" << std::endl;\n  return 0;\n}",
			[]span{{"CODE_CPP", "#include", "}"}}},
		{"csharp", Config{}, "using System;\nnamespace App {\n  class P { static void Main() { Console.WriteLine(\"hi\"); } }\n}",
			[]span{{"CODE_CSHARP", "using System", "}"}}},
		{"rust", Config{}, "fn main() {\n    let mut v: Vec<i32> = Vec::new();\n    v.push(1);\n    println!(\"{:?}\", v);\n}",
			[]span{{"CODE_RUST", "fn main", "}"}}},
		{"php", Config{}, "<?php\n$name = $_GET['name'];\necho \"Hello \" . $name;\n?>",
			[]span{{"CODE_PHP", "<?php", "$name;"}}},
		{"ruby fenced", Config{}, "```rb\nputs 'hi'\n```", []span{{"CODE_RUBY", "```rb", "```"}}},
		{"sql", Config{}, "Optimise:\nSELECT id, name FROM users\nWHERE age > 30\nORDER BY name;\nThanks",
			[]span{{"CODE_SQL", "SELECT", "ORDER BY name;"}}},
		{"shell shebang", Config{}, "#!/bin/bash\nset -e\ncd /tmp && rm -rf build\necho done",
			[]span{{"CODE_SHELL", "#!/bin/bash", "echo done"}}},
		{"two regions", Config{}, "First:\n```py\nx = 1\n```\nand then\n```sql\nSELECT 1;\n```",
			[]span{{"CODE_PYTHON", "```py", "```"}, {"CODE_SQL", "```sql", "```"}}},
		{"languages filter keeps", Config{Languages: []string{"sql"}}, "```py\nx = 1\n```\n```sql\nSELECT 1;\n```",
			[]span{{"CODE_SQL", "```sql", "```"}}},
		{"languages filter drops unknown", Config{Languages: []string{"py"}}, "~~~\nhello\n~~~", nil},
		{"allowed", Config{Allowed: []string{"python"}}, "```python\nx = 1\n```\n```\nzzz\n```",
			[]span{{"CODE", "```\nzzz", "```"}}},
		{"min lines 1", Config{MinLines: 1}, "Run this: x = foo(y);\nthanks", []span{{"CODE", "Run this", "x = foo(y);"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f, err := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(tc.text)})
			if err != nil {
				t.Fatal(err)
			}
			if f.Detected != (len(tc.want) > 0) || len(f.Matches) != len(tc.want) {
				t.Fatalf("got %+v, want %d matches", f, len(tc.want))
			}
			for i, w := range tc.want {
				m := f.Matches[i]
				got := tc.text[m.Start:m.End]
				if m.Kind != w.kind || !strings.HasPrefix(got, w.from) || !strings.HasSuffix(got, w.to) {
					t.Errorf("match %d = %s %q, want %s from %q to %q", i, m.Kind, got, w.kind, w.from, w.to)
				}
				if m.Score <= 0 || m.Score > 1 {
					t.Errorf("score %v out of (0,1]", m.Score)
				}
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{{Languages: []string{"cobol"}}, {Allowed: []string{"x"}}, {MinLines: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := New(Config{Languages: []string{"Go", "C++", "C#", "bash"}}); err != nil {
		t.Errorf("aliases rejected: %v", err)
	}
}

// TestBenignPrompts measures false positives on the benign prompts of the
// shared injection data: prose should almost never be taken for code. Rows
// of the code-bearing categories (code tasks with their code, Stack
// Overflow answers) hold real code and are left out.
func TestBenignPrompts(t *testing.T) {
	dir := dataset.Dir()
	if dir == "" {
		t.Skip("shared data not found")
	}
	fh, err := os.Open(filepath.Join(dir, "injection", "dev.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	defer fh.Close()
	s, _ := New(Config{})
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	var n, hits int
	for sc.Scan() {
		var row struct {
			Text     string `json:"text"`
			Label    int    `json:"label"`
			Category string `json:"category"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if row.Label != 0 || strings.Contains(row.Text, "```") || codeCategory(row.Category) {
			continue
		}
		n++
		f, _ := s.Scan(context.Background(), &scanner.Target{Text: scanner.NewText(row.Text)})
		if f.Detected {
			hits++
			t.Logf("flagged: %.120q", row.Text[f.Matches[0].Start:f.Matches[0].End])
		}
	}
	t.Logf("%d of %d benign prompts flagged", hits, n)
	if n > 0 && float64(hits) > 0.03*float64(n) {
		t.Errorf("%d of %d benign prompts flagged as code (> 3%%)", hits, n)
	}
}

// codeCategory reports whether rows of a data set category carry code.
func codeCategory(c string) bool {
	for _, p := range []string{"gpteacher/codegen", "bipia/benign/code-", "bipia/planted-code/"} {
		if strings.HasPrefix(c, p) {
			return true
		}
	}
	return false
}

func BenchmarkScan(b *testing.B) {
	s, _ := New(Config{})
	tgt := &scanner.Target{Text: scanner.NewText(scannertest.Fill("Please summarise the attached quarterly report for the board and list three risks.\n", 2048))}
	b.SetBytes(2048)
	b.ReportAllocs()
	for b.Loop() {
		if f, _ := s.Scan(context.Background(), tgt); f.Detected {
			b.Fatal("clean prompt flagged")
		}
	}
}
