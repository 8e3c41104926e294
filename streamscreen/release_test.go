package streamscreen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/pii"
)

// builders render an answer's text chunks as each format streams them,
// one event per chunk, with the format's own opening and terminator.
var builders = map[string]func(chunks []string) string{
	format.NameOpenAIChat: func(chunks []string) string {
		var b strings.Builder
		b.WriteString(roleChunk)
		for _, c := range chunks {
			b.WriteString(chunk(c))
		}
		b.WriteString(done)
		return b.String()
	},
	format.NameOpenAICompletions: func(chunks []string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString("data: " + mustJSON(map[string]any{"object": "text_completion", "choices": []any{map[string]any{"index": 0, "text": c}}}) + "\n\n")
		}
		b.WriteString(done)
		return b.String()
	},
	format.NameOpenAIResponses: func(chunks []string) string {
		var b strings.Builder
		b.WriteString("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[]}}\n\n")
		for i, c := range chunks {
			b.WriteString("event: response.output_text.delta\ndata: " + mustJSON(map[string]any{"type": "response.output_text.delta", "item_id": "m1",
				"output_index": 0, "content_index": 0, "delta": c, "sequence_number": i + 1}) + "\n\n")
		}
		b.WriteString("event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":99,\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[]}}\n\n")
		return b.String()
	},
	format.NameAnthropicMessages: func(chunks []string) string {
		var b strings.Builder
		b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n")
		for _, c := range chunks {
			b.WriteString("event: content_block_delta\ndata: " + mustJSON(map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": c}}) + "\n\n")
		}
		b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		return b.String()
	},
	format.NameGemini + " sse": func(chunks []string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString("data: " + geminiChunk(c, false) + "\r\n\r\n")
		}
		b.WriteString("data: " + geminiChunk("", true) + "\r\n\r\n")
		return b.String()
	},
	format.NameGemini + " array": func(chunks []string) string {
		var b strings.Builder
		b.WriteString("[")
		for _, c := range chunks {
			b.WriteString(geminiChunk(c, false) + "\n,\r\n")
		}
		b.WriteString(geminiChunk("", true) + "\n]")
		return b.String()
	},
	format.NameOllamaChat: func(chunks []string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString(mustJSON(map[string]any{"model": "m", "message": map[string]any{"role": "assistant", "content": c}, "done": false}) + "\n")
		}
		b.WriteString(`{"model":"m","message":{"role":"assistant","content":""},"done":true}` + "\n")
		return b.String()
	},
	format.NameOllamaGenerate: func(chunks []string) string {
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString(mustJSON(map[string]any{"model": "m", "response": c, "done": false}) + "\n")
		}
		b.WriteString(`{"model":"m","response":"","done":true}` + "\n")
		return b.String()
	},
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func geminiChunk(text string, last bool) string {
	cand := map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": text}}, "role": "model"}, "index": 0}
	if last {
		cand["finishReason"] = "STOP"
	}
	return mustJSON(map[string]any{"candidates": []any{cand}})
}

func formatOf(t *testing.T, name string) format.Format {
	t.Helper()
	f, err := format.ByName(strings.Fields(name)[0])
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// guard is an output pipeline that blocks secrets, card numbers and a
// banned phrase, with its release points.
func guard(t *testing.T) *scanner.Pipeline {
	return answerPipeline(t, scanner.Setting{Mode: scanner.ModeBlock, FlagMessage: "blocked"}, "cards",
		pii.Config{Entities: []string{pii.KindCreditCard}})
}

func releaseOptions(p *scanner.Pipeline) Options {
	return Options{
		Screen: func(ctx context.Context, conv *scanner.Conversation) *scanner.Result {
			return p.Screen(ctx, conv, scanner.Output)
		},
		Hold:       func(text string) int { return p.Hold(text, scanner.Output, nil) },
		Lookbehind: p.Lookbehind(scanner.Output),
	}
}

// eventReader hands the stream over one event per Read and records, before
// each, how many events the screener had written: what the client had
// received when the upstream sent the next event.
type eventReader struct {
	events  []string
	writes  *int
	before  []int
	pending string
}

func (e *eventReader) Read(p []byte) (int, error) {
	if e.pending == "" {
		if len(e.events) == 0 {
			return 0, io.EOF
		}
		e.before = append(e.before, *e.writes)
		e.pending, e.events = e.events[0], e.events[1:]
	}
	n := copy(p, e.pending)
	e.pending = e.pending[n:]
	return n, nil
}

// eventsOf splits a stream into its events' raw bytes.
func eventsOf(t testing.TB, f format.Format, stream string) []string {
	t.Helper()
	s := f.NewStream(strings.NewReader(stream))
	var events []string
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return events
		}
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, string(ev.Raw))
	}
}

// clientText decodes what the client received and joins its text.
func clientText(t *testing.T, f format.Format, writes []string) (string, *format.Error) {
	t.Helper()
	s := f.NewStream(strings.NewReader(strings.Join(writes, "")))
	var text strings.Builder
	var last *format.Error
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return text.String(), last
		}
		if err != nil {
			t.Fatalf("the client cannot decode its stream %q: %v", strings.Join(writes, ""), err)
		}
		text.WriteString(ev.Delta)
		if ev.Err != nil {
			last = ev.Err
		}
	}
}

// TestSplitMatchesNeverReachTheClient streams answers whose secret, card
// number or banned phrase is split across 2, 3 and 10 events, in every
// format: the stream is blocked, the client's copy decodes, ends with the
// provider's error, and holds no byte of the match.
func TestSplitMatchesNeverReachTheClient(t *testing.T) {
	p := guard(t)
	split := func(s string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, s[i*len(s)/n:(i+1)*len(s)/n])
		}
		return out
	}
	cases := []struct {
		name, match string
		chunks      []string
	}{
		{"password assignment in 10", `"Tr0ub4dor&3x"`, split(`db_password = "Tr0ub4dor&3x"`, 10)},
	}
	for _, n := range []int{2, 3, 10} {
		for _, m := range []struct{ kind, match string }{
			{"secret", fakeKey},
			{"card number", "4111 1111 1111 1111"},
			{"card number without spaces", "4111111111111111"},
			{"banned phrase", "Project Nightingale"},
		} {
			cases = append(cases, struct {
				name, match string
				chunks      []string
			}{fmt.Sprintf("%s in %d", m.kind, n), m.match, split(m.match, n)})
		}
	}
	for name, build := range builders {
		f := formatOf(t, name)
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				chunks := append([]string{"Sure", ", here", " it is: "}, c.chunks...)
				chunks = append(chunks, " and", " more", " words", " after.")
				answer := strings.Join(chunks, "")
				var writes []string
				opts := releaseOptions(p)
				opts.Stream = f.NewStream(&perEvent{events: eventsOf(t, f, build(chunks))})
				opts.Emit = func(b []byte) error { writes = append(writes, string(b)); return nil }
				out, err := Run(context.Background(), opts)
				if err != nil {
					t.Fatal(err)
				}
				if !out.Blocked {
					t.Fatalf("not blocked; client got %q", strings.Join(writes, ""))
				}
				got, blockErr := clientText(t, f, writes)
				start := strings.Index(answer, c.match)
				if !strings.HasPrefix(answer[:start], got) {
					t.Errorf("the client received %q, past the match's start in %q", got, answer)
				}
				if blockErr == nil || !strings.Contains(blockErr.Message, "blocked") {
					t.Errorf("the stream does not end with the provider's error: %+v", blockErr)
				}
			})
		}
	}
}

// TestProseLeavesAWordBehind checks that ordinary prose is released as it
// arrives: when the upstream sends an event, every event before it has
// reached the client (plain words are released at once; the role event
// leaves before any text arrives).
func TestProseLeavesAWordBehind(t *testing.T) {
	p := guard(t)
	words := strings.Fields("The capital of France is Paris, a city on the Seine known for its museums and its bridges!")
	for i := range words {
		words[i] += " "
	}
	for name, build := range builders {
		t.Run(name, func(t *testing.T) {
			f := formatOf(t, name)
			events := eventsOf(t, f, build(words))
			writes := 0
			r := &eventReader{events: events, writes: &writes}
			opts := releaseOptions(p)
			opts.Stream = f.NewStream(r)
			opts.Emit = func([]byte) error { writes++; return nil }
			if _, err := Run(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			// before[k] is what the client had when event k was sent:
			// every event before it.
			for k, n := range r.before {
				if n < k {
					t.Fatalf("when event %d was sent the client had %d events, want %d", k, n, k)
				}
			}
			if writes != len(events) {
				t.Errorf("%d writes for %d events", writes, len(events))
			}
		})
	}
}

// TestPlaceholdersRestoredInStreams checks that the request's placeholders
// are replaced by the user's values in a streamed answer, a placeholder
// split across events included, and that the record keeps the placeholder.
func TestPlaceholdersRestoredInStreams(t *testing.T) {
	var vault scanner.Vault
	const email = "jane.doe@example.com"
	ph := vault.Redact(email, []scanner.Match{{Start: 0, End: len(email), Kind: "EMAIL_ADDRESS"}})
	if ph != "[EMAIL_ADDRESS_1]" {
		t.Fatalf("placeholder %q", ph)
	}
	splits := [][]string{
		{"Write to " + ph + " today."},
		{"Write to [EMAIL_", "ADDRESS_1] today."},
		{"Write to [", "EMAIL", "_ADDRESS", "_1", "] today", "."},
		{"Write to ", ph, " or ", ph, "."},
	}
	p := guard(t)
	// The placeholder is held by the restoring itself: with detectors that
	// hold nothing (a policy without a detector that holds "[EMAIL_"), its
	// beginning still waits for the rest.
	holds := map[string]func(string) int{
		"release points": releaseOptions(p).Hold,
		"nothing held":   func(text string) int { return len(text) },
	}
	for name, build := range builders {
		f := formatOf(t, name)
		for i, chunks := range splits {
			for holdName, hold := range holds {
				t.Run(fmt.Sprint(name, "/", i, "/", holdName), func(t *testing.T) {
					var writes []string
					opts := releaseOptions(p)
					opts.Hold = hold
					opts.Vault = &vault
					opts.Stream = f.NewStream(&perEvent{events: eventsOf(t, f, build(chunks))})
					opts.Emit = func(b []byte) error { writes = append(writes, string(b)); return nil }
					out, err := Run(context.Background(), opts)
					if err != nil {
						t.Fatal(err)
					}
					got, _ := clientText(t, f, writes)
					want := strings.ReplaceAll(strings.Join(chunks, ""), ph, email)
					if got != want {
						t.Errorf("client text %q, want %q", got, want)
					}
					if strings.Contains(out.Redacted, email) || !strings.Contains(out.Answer, ph) {
						t.Errorf("the record keeps %q / %q, want placeholders only", out.Answer, out.Redacted)
					}
				})
			}
		}
	}
}

// TestHoldBackBoundsTheHold checks that stream_hold_back is the most text
// withheld: with a detector that would hold everything (its release point
// stays at 0), every event that ends further than the bound before the
// end of what arrived is released, and never text within the bound.
func TestHoldBackBoundsTheHold(t *testing.T) {
	f := formatOf(t, format.NameOpenAIChat)
	var words []string
	for range 40 {
		words = append(words, "word ")
	}
	for _, bound := range []int{16, 32, 64} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			var writes []string
			sent := 0
			events := eventsOf(t, f, builders[format.NameOpenAIChat](words))
			// Before each event is read, the client must hold all text but
			// the last bound bytes of what was sent.
			var failures []string
			r := &checkedReader{events: events, before: func() {
				got, _ := clientText(t, f, writes)
				// Events leave whole: the held text is the bound rounded
				// up to the event that crosses it.
				if held := sent - len(got); held < min(sent, bound) || held >= bound+len("word ") {
					failures = append(failures, fmt.Sprintf("after %d bytes of text the client had %d", sent, len(got)))
				}
			}, after: func(ev string) {
				var c struct {
					Choices []struct {
						Delta struct{ Content string } `json:"delta"`
					} `json:"choices"`
				}
				if json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(ev), "data: ")), &c) == nil && len(c.Choices) == 1 {
					sent += len(c.Choices[0].Delta.Content)
				}
			}}
			_, err := Run(context.Background(), Options{
				Stream: f.NewStream(r),
				Screen: func(context.Context, *scanner.Conversation) *scanner.Result {
					return &scanner.Result{Outcome: scanner.Passed}
				},
				Hold:     func(string) int { return 0 },
				HoldBack: bound,
				Emit:     func(b []byte) error { writes = append(writes, string(b)); return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(failures) > 0 {
				t.Fatal(strings.Join(failures, "\n"))
			}
			if got, _ := clientText(t, f, writes); got != strings.Join(words, "") {
				t.Errorf("the whole answer did not arrive at the end: %q", got)
			}
		})
	}
}

// checkedReader hands the stream over one event per Read, calling before
// ahead of handing an event over and after once it has.
type checkedReader struct {
	events  []string
	pending string
	before  func()
	after   func(ev string)
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.pending == "" {
		if len(c.events) == 0 {
			return 0, io.EOF
		}
		c.before()
		c.pending, c.events = c.events[0], c.events[1:]
		c.after(c.pending)
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}
