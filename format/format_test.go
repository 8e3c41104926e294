package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/scanner"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// paths are the request paths Detect must map to each format; the golden
// tests get their formats through Detect, so they test it too.
var paths = map[string]string{
	NameOpenAIChat:        "/v1/chat/completions",
	NameOpenAIResponses:   "/v1/responses",
	NameOpenAICompletions: "/v1/completions",
	NameOpenAIEmbeddings:  "/v1/embeddings",
	NameAnthropicMessages: "/v1/messages",
	NameGemini:            "/v1beta/models/gemini-2.0-flash:streamGenerateContent",
	NameOllamaChat:        "/api/chat",
	NameOllamaGenerate:    "/api/generate",
}

func detect(t *testing.T, name string) Format {
	t.Helper()
	f, err := Detect(paths[name], nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != name {
		t.Fatalf("Detect(%q) = %s, want %s", paths[name], f.Name(), name)
	}
	return f
}

// golden compares got with the golden file, or writes it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", path, got, want)
	}
}

func indent(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// fixed makes rendered ids and timestamps stable.
func fixed(t *testing.T) {
	oldNow, oldID := now, newID
	now = func() time.Time { return time.Date(2026, 11, 22, 10, 4, 5, 123e6, time.UTC) }
	newID = func() string { return "pw0123456789" }
	t.Cleanup(func() { now, newID = oldNow, oldID })
}

type goldenParse struct {
	Model    string            `json:"model,omitempty"`
	Stream   bool              `json:"stream,omitempty"`
	Messages []scanner.Message `json:"messages,omitempty"`
	Error    *Error            `json:"error,omitempty"`
}

// editsFor builds one edit per message whose text is awkward to encode
// (quotes, a newline, a backslash), so the rewrite's escaping is tested.
func editsFor(msgs []scanner.Message) []Edit {
	edits := make([]Edit, len(msgs))
	for i, m := range msgs {
		edits[i] = Edit{Ref: m.Ref, Text: fmt.Sprintf("[R%d \"q\"\n\\]", i)}
	}
	return edits
}

// checkRewrite rewrites every text of body and checks that the result is
// valid JSON that parses back to the same refs with the new texts.
func checkRewrite(t *testing.T, body []byte, msgs []scanner.Message, rw func([]byte, []Edit) ([]byte, error), parse func([]byte) ([]scanner.Message, error)) []byte {
	t.Helper()
	edits := editsFor(msgs)
	out, err := rw(body, edits)
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	if !json.Valid(out) {
		t.Fatalf("rewrite produced invalid JSON: %s", out)
	}
	again, err := parse(out)
	if err != nil {
		t.Fatalf("parse after rewrite: %v", err)
	}
	if len(again) != len(msgs) {
		t.Fatalf("after rewrite %d texts, want %d", len(again), len(msgs))
	}
	for i, m := range again {
		if m.Ref != msgs[i].Ref || m.Role != msgs[i].Role || m.Text != edits[i].Text {
			t.Errorf("text %d after rewrite = %+v, want ref %q role %s text %q", i, m, msgs[i].Ref, msgs[i].Role, edits[i].Text)
		}
	}
	return out
}

func TestRequests(t *testing.T) {
	dirs, err := os.ReadDir("testdata/requests")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		f := detect(t, d.Name())
		files, _ := filepath.Glob(filepath.Join("testdata/requests", d.Name(), "*.json"))
		for _, file := range files {
			name := strings.TrimSuffix(filepath.Base(file), ".json")
			t.Run(d.Name()+"/"+name, func(t *testing.T) {
				body, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				req, err := f.ParseRequest(body)
				var g goldenParse
				wantErr := strings.HasPrefix(name, "err_")
				switch {
				case err != nil && !wantErr:
					t.Fatalf("ParseRequest: %v", err)
				case err == nil && wantErr:
					t.Fatalf("ParseRequest accepted a bad request: %+v", req)
				case err != nil:
					var fe *Error
					if !errors.As(err, &fe) || fe.Status != 400 {
						t.Fatalf("error %v is not a 400 *Error", err)
					}
					g.Error = fe
				default:
					g = goldenParse{Model: req.Model, Stream: req.Stream, Messages: req.Conversation.Messages}
				}
				golden(t, strings.TrimSuffix(file, ".json")+".golden", indent(g))
				if err != nil {
					return
				}
				parse := func(b []byte) ([]scanner.Message, error) {
					r, err := f.ParseRequest(b)
					if err != nil {
						return nil, err
					}
					return r.Conversation.Messages, nil
				}
				out := checkRewrite(t, body, req.Conversation.Messages, f.RewriteRequest, parse)
				golden(t, strings.TrimSuffix(file, ".json")+".rewritten", out)
			})
		}
	}
}

func TestResponses(t *testing.T) {
	dirs, err := os.ReadDir("testdata/responses")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		f := detect(t, d.Name())
		files, _ := filepath.Glob(filepath.Join("testdata/responses", d.Name(), "*.json"))
		for _, file := range files {
			name := strings.TrimSuffix(filepath.Base(file), ".json")
			t.Run(d.Name()+"/"+name, func(t *testing.T) {
				body, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				conv, err := f.ParseResponse(body)
				var g goldenParse
				wantErr := strings.HasPrefix(name, "err_")
				switch {
				case err != nil && !wantErr:
					t.Fatalf("ParseResponse: %v", err)
				case err == nil && wantErr:
					t.Fatalf("ParseResponse accepted a bad answer: %+v", conv)
				case err != nil:
					var fe *Error
					if !errors.As(err, &fe) || fe.Status != 502 {
						t.Fatalf("error %v is not a 502 *Error", err)
					}
					g.Error = fe
				default:
					g.Messages = conv.Messages
					for _, m := range conv.Messages {
						if m.Role != scanner.RoleAssistant {
							t.Errorf("answer text %q has role %s", m.Ref, m.Role)
						}
					}
				}
				golden(t, strings.TrimSuffix(file, ".json")+".golden", indent(g))
				if err != nil || len(conv.Messages) == 0 {
					return
				}
				parse := func(b []byte) ([]scanner.Message, error) {
					c, err := f.ParseResponse(b)
					if err != nil {
						return nil, err
					}
					return c.Messages, nil
				}
				checkRewrite(t, body, conv.Messages, f.RewriteResponse, parse)
			})
		}
	}
}

type goldenEvent struct {
	Raw      string `json:"raw"`
	Delta    string `json:"delta,omitempty"`
	Terminal bool   `json:"terminal,omitempty"`
	Err      *Error `json:"err,omitempty"`
}

func TestStreams(t *testing.T) {
	dirs, err := os.ReadDir("testdata/streams")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		f := detect(t, d.Name())
		files, _ := filepath.Glob(filepath.Join("testdata/streams", d.Name(), "*"))
		for _, file := range files {
			if strings.HasSuffix(file, ".golden") {
				continue
			}
			t.Run(d.Name()+"/"+filepath.Base(file), func(t *testing.T) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				s := f.NewStream(bytes.NewReader(data))
				var got []goldenEvent
				var forwarded []byte
				for {
					ev, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatalf("Next: %v", err)
					}
					forwarded = append(forwarded, ev.Raw...)
					got = append(got, goldenEvent{string(ev.Raw), ev.Delta, ev.Terminal, ev.Err})
					if ev.Delta == "" {
						continue
					}
					// A rewritten event must decode alone to the new delta.
					text := strings.ToUpper(ev.Delta) + " \"x\""
					rw, err := s.Rewrite(&ev, text)
					if err != nil {
						t.Fatalf("Rewrite: %v", err)
					}
					if strings.HasSuffix(file, "array.json") {
						// An element of a JSON array stream decodes
						// alone as a one-element array.
						rw = append([]byte("["), bytes.TrimLeft(rw, "[, \r\n")...)
					}
					one, err := f.NewStream(bytes.NewReader(rw)).Next()
					if err != nil || one.Delta != text {
						t.Errorf("rewritten event %q decodes to delta %q (%v), want %q", rw, one.Delta, err, text)
					}
				}
				// Responses is exempt: after the rewrites above, its
				// decoder rewrites the events that repeat the text
				// (TestResponsesEcho), so its output differs by design.
				if !bytes.Equal(forwarded, data) && d.Name() != NameOpenAIResponses {
					t.Errorf("the events' raw bytes do not add up to the stream:\n got %q\nwant %q", forwarded, data)
				}
				golden(t, file+".golden", indent(got))
			})
		}
	}
}

// TestResponsesEcho checks that a redaction made in Responses deltas also
// reaches the events that repeat the whole text.
func TestResponsesEcho(t *testing.T) {
	data, err := os.ReadFile("testdata/streams/openai_responses/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	s := openAIResponses{}.NewStream(bytes.NewReader(data))
	var out []byte
	for {
		ev, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		raw := ev.Raw
		if strings.Contains(ev.Delta, "jane@") || ev.Delta == "example.com" {
			if raw, err = s.Rewrite(&ev, strings.ReplaceAll(strings.ReplaceAll(ev.Delta, "jane@", "[EMAIL_1]"), "example.com", "")); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, raw...)
	}
	if bytes.Contains(out, []byte("jane@")) || !bytes.Contains(out, []byte(`"text":"Mail [EMAIL_1]"`)) {
		t.Errorf("redaction did not reach the repeated text:\n%s", out)
	}
	if n := bytes.Count(out, []byte("Mail [EMAIL_1]")); n != 3 {
		t.Errorf("redacted text appears %d times, want 3 (delta, done, completed):\n%s", n, out)
	}
}

func allFormats(t *testing.T) []Format {
	var fs []Format
	for name := range paths {
		fs = append(fs, detect(t, name))
	}
	return fs
}

// TestRender checks Blocked, Completion, StreamCompletion and stream Block
// against golden files, and that each canned answer reads back through the
// format's own parsers with the message as its text.
func TestRender(t *testing.T) {
	fixed(t)
	const msg = `Blocked by policy: <secret> & "quotes"`
	for _, f := range allFormats(t) {
		t.Run(f.Name(), func(t *testing.T) {
			req := &Request{Model: "model-x"}
			var out bytes.Buffer
			blocked := f.Blocked(403, "content_blocked", msg)
			if !json.Valid(blocked) {
				t.Errorf("Blocked is not JSON: %s", blocked)
			}
			fmt.Fprintf(&out, "# Blocked\n%s\n", blocked)
			if c := f.Completion(req, msg); c != nil {
				fmt.Fprintf(&out, "# Completion\n%s\n", c)
				conv, err := f.ParseResponse(c)
				if err != nil || len(conv.Messages) != 1 || conv.Messages[0].Text != msg {
					t.Errorf("Completion reads back as %+v, %v", conv, err)
				}
			} else if f.Name() != NameOpenAIEmbeddings {
				t.Errorf("Completion is nil")
			}
			if sc := f.StreamCompletion(req, msg); sc != nil {
				fmt.Fprintf(&out, "# StreamCompletion\n%s", sc)
				s := f.NewStream(bytes.NewReader(sc))
				var text strings.Builder
				terminal := false
				for {
					ev, err := s.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					text.WriteString(ev.Delta)
					terminal = terminal || ev.Terminal
				}
				if text.String() != msg || !terminal {
					t.Errorf("StreamCompletion streams %q (terminal %v), want %q", text.String(), terminal, msg)
				}
				blk := s.Block("content_blocked", msg)
				fmt.Fprintf(&out, "# Stream Block\n%s", blk)
				ev, err := f.NewStream(bytes.NewReader(blk)).Next()
				if err != nil || ev.Err == nil || ev.Err.Message != msg || ev.Terminal {
					t.Errorf("stream Block decodes as %+v, %v; want a provider error", ev, err)
				}
			}
			golden(t, filepath.Join("testdata/render", f.Name()+".golden"), out.Bytes())
		})
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		path, body, want string
	}{
		{"/openai/deployments/gpt4/chat/completions", "", NameOpenAIChat},
		{"/v1/models/gemini-pro:generateContent", "", NameGemini},
		{"/v1/projects/p/locations/us/publishers/google/models/gemini-2.0-flash:streamGenerateContent", "", NameGemini},
		{"/proxy", `{"contents":[{"parts":[{"text":"x"}]}]}`, NameGemini},
		{"/proxy", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}`, NameOpenAIChat},
		{"/proxy", `{"model":"claude","system":"s","messages":[]}`, NameAnthropicMessages},
		{"/proxy", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}]}`, NameAnthropicMessages},
		{"/proxy", `{"prompt":"x"}`, NameOpenAICompletions},
		{"/proxy", `{"input":"x","instructions":"y"}`, NameOpenAIResponses},
		{"/proxy", `{"input":[{"role":"user","content":"x"}]}`, NameOpenAIResponses},
		{"/proxy", `{"input":["a","b"]}`, NameOpenAIEmbeddings},
		{"/proxy", `{"query":"x"}`, ""},
		{"/proxy", `not json`, ""},
		{"/proxy", ``, ""},
	}
	for _, tt := range tests {
		f, err := Detect(tt.path, []byte(tt.body))
		switch {
		case tt.want == "" && !errors.Is(err, ErrUnknownFormat):
			t.Errorf("Detect(%q, %q) = %v, %v; want ErrUnknownFormat", tt.path, tt.body, f, err)
		case tt.want != "" && (err != nil || f.Name() != tt.want):
			t.Errorf("Detect(%q, %q) = %v, %v; want %s", tt.path, tt.body, f, err, tt.want)
		}
	}
	g, _ := Detect("/v1beta/models/gemini-2.5-pro:generateContent", nil)
	req, err := g.ParseRequest([]byte(`{"contents":[]}`))
	if err != nil || req.Model != "gemini-2.5-pro" || req.Stream {
		t.Errorf("bound Gemini request = %+v, %v", req, err)
	}
	if _, err := ByName("nope"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("ByName(nope) = %v", err)
	}
}

func TestOllamaStreamDefault(t *testing.T) {
	for _, tt := range []struct {
		body string
		want bool
	}{
		{`{"model":"m","messages":[]}`, true},
		{`{"model":"m","messages":[],"stream":null}`, true},
		{`{"model":"m","messages":[],"stream":false}`, false},
		{`{"model":"m","messages":[],"STREAM":false}`, false},
	} {
		req, err := ollamaChat{}.ParseRequest([]byte(tt.body))
		if err != nil || req.Stream != tt.want {
			t.Errorf("%s: stream %v, %v; want %v", tt.body, req.Stream, err, tt.want)
		}
	}
}

func TestRewriteErrors(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":"hi"}],"n":[1,{"a":true}]}`)
	for _, tt := range []struct {
		ref  string
		want error
	}{
		{"messages[1].content", ErrUnknownRef},
		{"messages[0].role.x", ErrUnknownRef},
		{"n[1].a", ErrUnknownRef},
		{"n[1]", ErrUnknownRef},
		{"messages[0].content#x", ErrUnknownRef},
		{"messages[x]", errPath},
		{"messages..content", errPath},
	} {
		if _, err := rewrite(body, []Edit{{Ref: tt.ref, Text: "x"}}); !errors.Is(err, tt.want) {
			t.Errorf("rewrite %q: %v, want %v", tt.ref, err, tt.want)
		}
	}
	if _, err := rewrite(body, []Edit{{"messages[0].content", "a"}, {"messages[0].content", "b"}}); err == nil {
		t.Error("two edits of one value were accepted")
	}
	out, err := rewrite([]byte(`{ "a" : 4111111111111111 , "b":[ "x" ] }`), []Edit{{"a", "[CARD]"}, {"b[0]", "y"}})
	if err != nil || string(out) != `{ "a" : "[CARD]" , "b":[ "y" ] }` {
		t.Errorf("rewrite kept %s, %v", out, err)
	}
}

func TestGeneric(t *testing.T) {
	g, err := NewGeneric(GenericConfig{
		Request:  []string{"query", "history[*].text"},
		System:   []string{`meta["system prompt"]`},
		Response: []string{"result.answers[*]"},
		Model:    "engine",
		Stream:   "opts.stream",
	})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"engine":"e1","opts":{"stream":true},"meta":{"system prompt":"be nice"},"query":"hello","history":[{"text":"a"},{"text":{"nested":["b","c"]}},{"other":"skip"}]}`)
	req, err := g.ParseRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/generic/request.golden", indent(goldenParse{Model: req.Model, Stream: req.Stream, Messages: req.Conversation.Messages}))
	parse := func(b []byte) ([]scanner.Message, error) {
		r, err := g.ParseRequest(b)
		if err != nil {
			return nil, err
		}
		return r.Conversation.Messages, nil
	}
	checkRewrite(t, body, req.Conversation.Messages, g.RewriteRequest, parse)
	fixed(t)
	c := g.Completion(req, "flagged")
	if string(c) != `{"result":{"answers":["flagged"]}}` {
		t.Errorf("Completion = %s", c)
	}
	conv, err := g.ParseResponse(c)
	if err != nil || len(conv.Messages) != 1 || conv.Messages[0].Text != "flagged" {
		t.Errorf("Completion reads back as %+v, %v", conv, err)
	}
	if _, err := g.ParseRequest([]byte(`{"query":"a","query":"b"}`)); err == nil {
		t.Error("duplicate key on a configured path was accepted")
	}
	for _, bad := range []GenericConfig{{}, {Request: []string{"a[x]"}}, {Request: []string{"a"}, Model: "m[*]"}} {
		if _, err := NewGeneric(bad); err == nil {
			t.Errorf("NewGeneric(%+v) accepted", bad)
		}
	}
}

// TestStopIndex checks the word-at-a-time scan against a byte loop, for
// every stop byte at every position of runs around the word sizes, with
// plain bytes on either side that come close to the stop values.
func TestStopIndex(t *testing.T) {
	plain := []byte{' ', '!', '#', '[', ']', 'a', 0x7f, 0x80, 0xa2, 0xdc, 0xff}
	stops := []byte{0, 0x1f, '"', '\\'}
	for n := 0; n <= 40; n++ {
		for _, p := range plain {
			b := bytes.Repeat([]byte{p}, n)
			if got := stopIndex(b, 0); got != n {
				t.Fatalf("stopIndex(%d × %#x) = %d, want %d", n, p, got, n)
			}
			for pos := range n {
				for _, s := range stops {
					c := bytes.Clone(b)
					c[pos] = s
					for from := 0; from <= pos; from += 3 {
						if got := stopIndex(c, from); got != pos {
							t.Fatalf("stopIndex(%d × %#x with %#x at %d, from %d) = %d", n, p, s, pos, from, got)
						}
					}
				}
			}
		}
	}
}

// TestParseErrors pins the message and offset of each kind of syntax
// error, which reach clients in 400 answers.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `unexpected end of JSON at byte 0`},
		{`{`, `expected a string object key at byte 1`},
		{`{"a"`, `expected ':' after object key at byte 4`},
		{`{"a":}`, `invalid character '}' looking for a value at byte 5`},
		{`{"a":1,}`, `expected a string object key at byte 7`},
		{`{1:2}`, `expected a string object key at byte 1`},
		{`[1 2]`, `invalid character '2' after a value at byte 3`},
		{`"abc`, `unterminated string at byte 4`},
		{`"a\x"`, `invalid escape at byte 2`},
		{`"a\u12g4"`, `invalid \u escape at byte 2`},
		{`"\u12`, `unterminated string at byte 1`},
		{"\"a\x01\"", `control character in string at byte 2`},
		{"\"\xff\"", `invalid UTF-8 at byte 1`},
		{`01`, `unexpected data after the top-level value at byte 1`},
		{`{} x`, `unexpected data after the top-level value at byte 3`},
		{`-`, `invalid number at byte 0`},
		{`1.`, `invalid number at byte 0`},
		{`1e+`, `invalid number at byte 0`},
		{`[-]`, `invalid number at byte 1`},
		{`tru`, `invalid literal at byte 0`},
		{strings.Repeat("[", maxDepth+1), fmt.Sprintf("nesting too deep at byte %d", maxDepth)},
		{strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), ""},
	} {
		got := ""
		if err := validate([]byte(tc.in)); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("validate(%.20q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestStreamReadersLongEvents checks that events larger than the decoders'
// read buffer arrive whole and byte for byte, and that the size bound still
// holds across buffer refills.
func TestStreamReadersLongEvents(t *testing.T) {
	long := strings.Repeat("x", 3*streamReadBuffer+17)
	tests := []struct {
		name    string
		ndjson  bool
		input   string
		max     int
		want    []string // raw events
		wantErr error
	}{
		{"long SSE data line", false, "data: " + long + "\n\ndata: b\n\n", 0, []string{"data: " + long + "\n\n", "data: b\n\n"}, nil},
		{"long SSE event of many lines", false, strings.Repeat("data: "+long[:1000]+"\n", 20) + "\n", 0, []string{strings.Repeat("data: "+long[:1000]+"\n", 20) + "\n"}, nil},
		{"SSE event over the bound", false, "data: " + long + "\n\n", 2 * streamReadBuffer, nil, ErrEventTooLarge},
		{"long NDJSON line", true, `{"a":"` + long + "\"}\n{}\n", 0, []string{`{"a":"` + long + "\"}\n", "{}\n"}, nil},
		{"NDJSON line over the bound", true, `{"a":"` + long + "\"}\n", 2 * streamReadBuffer, nil, ErrEventTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var next func() ([]byte, error)
			if tt.ndjson {
				r := NewNDJSONReader(strings.NewReader(tt.input), tt.max)
				next = func() ([]byte, error) { raw, _, err := r.Next(); return raw, err }
			} else {
				r := NewSSEReader(strings.NewReader(tt.input), tt.max)
				next = func() ([]byte, error) { ev, err := r.Next(); return ev.Raw, err }
			}
			var got []string
			for {
				raw, err := next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if tt.wantErr == nil || !errors.Is(err, tt.wantErr) {
						t.Fatalf("error %v, want %v", err, tt.wantErr)
					}
					return
				}
				got = append(got, string(raw))
			}
			if tt.wantErr != nil {
				t.Fatalf("no error, want %v", tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("events differ: got %d events, want %d", len(got), len(tt.want))
			}
		})
	}
}
