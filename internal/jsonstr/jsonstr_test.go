package jsonstr

import (
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		want       string
		wantNoHTML string
	}{
		{"plain", "hello", `"hello"`, `"hello"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`, `"a\"b\\c"`},
		{"control characters", "\b\f\n\r\t\x01", `"\b\f\n\r\t\u0001"`, `"\b\f\n\r\t\u0001"`},
		{"html", "<a>&", `"\u003ca\u003e\u0026"`, `"<a>&"`},
		{"line separators", "a\u2028b\u2029", `"a\u2028b\u2029"`, `"a\u2028b\u2029"`},
		{"invalid utf-8", "a\xffb", `"a\ufffdb"`, `"a\ufffdb"`},
		{"multi-byte", "héllo 😀", `"héllo 😀"`, `"héllo 😀"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Append(nil, tt.in, true)); got != tt.want {
				t.Errorf("escapeHTML: got %s, want %s", got, tt.want)
			}
			if got := string(Append(nil, tt.in, false)); got != tt.wantNoHTML {
				t.Errorf("no escapeHTML: got %s, want %s", got, tt.wantNoHTML)
			}
			// With HTML escaping the output is encoding/json's own.
			std, _ := json.Marshal(tt.in)
			if got := string(Append(nil, tt.in, true)); got != string(std) {
				t.Errorf("differs from encoding/json: %s vs %s", got, std)
			}
		})
	}
}
