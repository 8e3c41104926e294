package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/promptwall/promptwall/scanner"
)

// The fuzz targets below run in every `go test` on their seed corpora
// (testdata/fuzz/<Target>/, generated from the golden fixtures, plus the
// fixtures themselves added here); `go test -fuzz=<Target>` explores from
// there.

func fuzzFormats(t testing.TB) []Format {
	var fs []Format
	for _, name := range []string{NameOpenAIChat, NameOpenAIResponses, NameOpenAICompletions, NameOpenAIEmbeddings,
		NameAnthropicMessages, NameGemini, NameOllamaChat, NameOllamaGenerate} {
		f, err := ByName(name)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	g, err := NewGeneric(GenericConfig{Request: []string{"messages[*].content", "input"}, Response: []string{"output[*]"}})
	if err != nil {
		t.Fatal(err)
	}
	return append(fs, g)
}

func addFixtures(f *testing.F, glob string) {
	files, _ := filepath.Glob(glob)
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
}

// FuzzParseRequest feeds every body to every format. A parse must not
// panic; what it accepts must be JSON that encoding/json accepts too; and
// rewriting every text it found must give valid JSON that parses back to
// the same refs carrying the new texts.
func FuzzParseRequest(f *testing.F) {
	addFixtures(f, "testdata/requests/*/*.json")
	formats := fuzzFormats(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fm := range formats {
			req, err := fm.ParseRequest(body)
			if err != nil {
				var fe *Error
				if !errors.As(err, &fe) || fe.Status != 400 {
					t.Fatalf("%s: error %v is not a 400 *Error", fm.Name(), err)
				}
				continue
			}
			if !json.Valid(body) {
				t.Fatalf("%s accepted invalid JSON", fm.Name())
			}
			fuzzRewrite(t, fm.Name(), body, req.Conversation.Messages, fm.RewriteRequest, func(b []byte) ([]scanner.Message, error) {
				r, err := fm.ParseRequest(b)
				if err != nil {
					return nil, err
				}
				return r.Conversation.Messages, nil
			})
		}
	})
}

// FuzzParseResponse is FuzzParseRequest for answers.
func FuzzParseResponse(f *testing.F) {
	addFixtures(f, "testdata/responses/*/*.json")
	formats := fuzzFormats(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fm := range formats {
			conv, err := fm.ParseResponse(body)
			if err != nil {
				continue
			}
			fuzzRewrite(t, fm.Name(), body, conv.Messages, fm.RewriteResponse, func(b []byte) ([]scanner.Message, error) {
				c, err := fm.ParseResponse(b)
				if err != nil {
					return nil, err
				}
				return c.Messages, nil
			})
		}
	})
}

func fuzzRewrite(t *testing.T, name string, body []byte, msgs []scanner.Message, rw func([]byte, []Edit) ([]byte, error), parse func([]byte) ([]scanner.Message, error)) {
	t.Helper()
	if len(msgs) == 0 {
		return
	}
	edits := editsFor(msgs)
	out, err := rw(body, edits)
	if err != nil {
		t.Fatalf("%s: rewrite of its own refs failed: %v", name, err)
	}
	if !json.Valid(out) {
		t.Fatalf("%s: rewrite produced invalid JSON", name)
	}
	again, err := parse(out)
	if err != nil {
		t.Fatalf("%s: rewritten body does not parse: %v", name, err)
	}
	if len(again) != len(msgs) {
		t.Fatalf("%s: %d texts after rewrite, want %d", name, len(again), len(msgs))
	}
	for i, m := range again {
		if m.Ref != msgs[i].Ref || m.Text != edits[i].Text {
			t.Fatalf("%s: text %d after rewrite = %q at %q, want %q at %q", name, i, m.Text, m.Ref, edits[i].Text, msgs[i].Ref)
		}
	}
}

// FuzzValidate holds the validator to encoding/json: both accept the same
// documents, except that nesting beyond maxDepth, invalid UTF-8 and keys
// equal under case folding are refused here.
func FuzzValidate(f *testing.F) {
	addFixtures(f, "testdata/requests/*/*.json")
	f.Add([]byte(`[1e5,-0.5,"\ud800",{"a":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		err := validate(b)
		std := json.Valid(b)
		if err == nil && !std {
			t.Fatalf("validate accepted what encoding/json refuses")
		}
		_, dup := errors.AsType[*DuplicateKeyError](err)
		if err != nil && std && !dup && !strings.Contains(err.Error(), "nesting too deep") && utf8.Valid(b) {
			t.Fatalf("validate refused valid JSON: %v", err)
		}
	})
}

const fuzzMax = 512

// drain reads a stream to its end and checks the invariants every reader
// keeps: events never exceed the bound, and their raw bytes add up to the
// input (byte-exact forwarding) unless a read failed.
func drain(t *testing.T, next func() ([]byte, error), input []byte) {
	t.Helper()
	var all []byte
	for range len(input) + 2 {
		raw, err := next()
		if err == io.EOF {
			if !bytes.Equal(all, input) {
				t.Fatalf("events add up to %q, want %q", all, input)
			}
			return
		}
		if err != nil {
			return
		}
		if len(raw) > fuzzMax {
			t.Fatalf("event of %d bytes passed the %d-byte bound", len(raw), fuzzMax)
		}
		if len(raw) == 0 {
			t.Fatalf("empty event")
		}
		all = append(all, raw...)
	}
	t.Fatalf("reader did not reach the end of %d bytes", len(input))
}

// FuzzSSEReader checks the SSE reader's bounds and exactness, and runs each
// SSE format's decoder (with rewrites of every delta) over the same input.
func FuzzSSEReader(f *testing.F) {
	addFixtures(f, "testdata/streams/*/*.sse")
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n: c\n\nevent: x\ndata\n\n"))
	formats := fuzzFormats(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewSSEReader(bytes.NewReader(data), fuzzMax)
		drain(t, func() ([]byte, error) {
			ev, err := r.Next()
			return ev.Raw, err
		}, data)
		for _, fm := range formats {
			if s := fm.NewStream(bytes.NewReader(data)); s != nil {
				fuzzStream(t, s)
			}
		}
	})
}

// FuzzNDJSONReader is FuzzSSEReader for newline-delimited JSON.
func FuzzNDJSONReader(f *testing.F) {
	addFixtures(f, "testdata/streams/*/*.ndjson")
	addFixtures(f, "testdata/streams/gemini/*.json")
	f.Add([]byte("{\"a\":1}\r\n\n  {}  \n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewNDJSONReader(bytes.NewReader(data), fuzzMax)
		drain(t, func() ([]byte, error) {
			raw, _, err := r.Next()
			return raw, err
		}, data)
		fuzzStream(t, ollamaChat{}.NewStream(bytes.NewReader(data)))
		fuzzStream(t, gemini{}.NewStream(bytes.NewReader(data)))
	})
}

func fuzzStream(t *testing.T, s Stream) {
	for range 10000 {
		ev, err := s.Next()
		if err != nil {
			return
		}
		if ev.Delta != "" {
			rw, err := s.Rewrite(&ev, "[X]")
			if err != nil {
				t.Fatalf("rewrite of a decoded delta failed: %v", err)
			}
			if len(rw) == 0 {
				t.Fatalf("rewrite produced nothing")
			}
		}
	}
}

// FuzzUnquote holds string decoding to encoding/json: escapes, surrogate
// pairs and unpaired surrogates decode the same, and a string's tape node
// marks escapes exactly when its raw form holds a backslash.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`""`, `"plain"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`,
		`"\ud800"`, `"\udc00\ud800x"`, `"\ud800\u0041"`, `"\ud800\ud800\udc00"`, `"héllo wörld 中文"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parse(b, nil)
		if err != nil || b[d.root().s] != '"' {
			return
		}
		v := d.root()
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatalf("encoding/json refuses %q: %v", b, err)
		}
		if got := string(d.unquote(v)); got != want {
			t.Fatalf("unquote(%q) = %q, want %q", b, got, want)
		}
		if d.tape[v.t].esc != bytes.ContainsRune(b[v.s:v.e], '\\') {
			t.Fatalf("esc = %v for %q", d.tape[v.t].esc, b)
		}
	})
}
