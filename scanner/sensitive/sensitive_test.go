package sensitive

import (
	"context"
	"testing"

	"github.com/promptwall/promptwall/scanner"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		text  string
		kinds []string
	}{
		{"clean answer", Config{}, "The capital of France is Paris.", nil},
		{"secret in answer", Config{}, "Use the key AKIAZ7VRSQ4LMXWB2PEH to log in.", []string{"AWS_ACCESS_KEY_ID"}},
		{"e-mail in answer", Config{}, "Write to jane.doe@example.org for access.", []string{"EMAIL_ADDRESS"}},
		{"both", Config{}, "jane.doe@example.org uses AKIAZ7VRSQ4LMXWB2PEH", []string{"AWS_ACCESS_KEY_ID", "EMAIL_ADDRESS"}},
		{"pii off", Config{SkipPII: true}, "Write to jane.doe@example.org for access.", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			text := scanner.NewText(tc.text)
			f, err := s.Scan(context.Background(), &scanner.Target{Text: text, Direction: scanner.Output, Role: scanner.RoleAssistant})
			if err != nil {
				t.Fatal(err)
			}
			if f.Detected != (len(tc.kinds) > 0) {
				t.Fatalf("detected=%v, want kinds %v (matches %+v)", f.Detected, tc.kinds, f.Matches)
			}
			got := map[string]bool{}
			for _, m := range f.Matches {
				got[m.Kind] = true
				if m.Start < 0 || m.End > len(tc.text) || m.Start >= m.End {
					t.Errorf("match out of range: %+v", m)
				}
			}
			for _, k := range tc.kinds {
				if !got[k] {
					t.Errorf("kind %s not reported; got %v", k, got)
				}
			}
		})
	}
}
