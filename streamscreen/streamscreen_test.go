package streamscreen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/promptwall/promptwall/format"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/secrets"
)

// A fake key of the shape the secrets scanner knows; not a real credential.
const fakeKey = "AKIAZ7VRSQ4LMXWB2PEH"

func chunk(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "c1", "object": "chat.completion.chunk",
		"choices": []map[string]any{{"index": 0, "delta": map[string]string{"content": content}}},
	})
	return "data: " + string(b) + "\n\n"
}

const roleChunk = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}` + "\n\n"
const done = "data: [DONE]\n\n"

func pipeline(t *testing.T, mode scanner.Mode) Screen {
	t.Helper()
	sec, err := secrets.New(secrets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := scanner.NewPipeline([]scanner.Stage{{
		Setting: scanner.Setting{ID: "secrets", Version: "1", Enabled: true, Mode: mode, Blocking: true,
			FlagMessage: "no secrets in answers", Directions: []scanner.Direction{scanner.Output}},
		Scanner: sec,
	}}, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, conv *scanner.Conversation) *scanner.Result {
		return p.Screen(ctx, conv, scanner.Output)
	}
}

func openAIStream(r io.Reader) format.Stream {
	f, err := format.ByName(format.NameOpenAIChat)
	if err != nil {
		panic(err)
	}
	return f.NewStream(r)
}

// run screens the events and returns every write the client received.
func run(t *testing.T, events []string, screen Screen, holdBack int) ([]string, Outcome) {
	t.Helper()
	var writes []string
	out, err := Run(context.Background(), Options{
		Stream:   openAIStream(&perEvent{events: events}),
		Screen:   screen,
		HoldBack: holdBack,
		Emit: func(b []byte) error {
			writes = append(writes, string(b))
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return writes, out
}

// perEvent hands a stream over one event per Read, as an upstream that
// writes each event on its own does.
type perEvent struct {
	events []string
	cur    string
}

func (p *perEvent) Read(b []byte) (int, error) {
	if p.cur == "" {
		if len(p.events) == 0 {
			return 0, io.EOF
		}
		p.cur, p.events = p.events[0], p.events[1:]
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

func TestCleanStreamPassesEventByEvent(t *testing.T) {
	events := []string{roleChunk}
	for _, w := range strings.Fields("The capital of France is Paris , a city on the Seine .") {
		events = append(events, chunk(w+" "))
	}
	events = append(events, done)
	writes, out := run(t, events, pipeline(t, scanner.ModeBlock), 16)
	if len(writes) != len(events) {
		t.Fatalf("every event must be its own write: %d writes for %d events", len(writes), len(events))
	}
	for i := range events {
		if writes[i] != events[i] {
			t.Fatalf("event %d changed:\n got %q\nwant %q", i, writes[i], events[i])
		}
	}
	if out.Blocked || out.Result == nil || out.Result.Outcome != scanner.Passed {
		t.Errorf("outcome %+v", out.Result)
	}
	if !strings.HasPrefix(out.Answer, "The capital of France") {
		t.Errorf("assembled answer %q", out.Answer)
	}
}

func TestSecretSplitAcrossEventsIsBlockedBeforeAnyPartLeaves(t *testing.T) {
	splits := [][]string{
		{fakeKey[:8], fakeKey[8:]},
		{fakeKey[:4], fakeKey[4:12], fakeKey[12:]},
		{"AKIA", "Z7VRSQ4LM", "XWB2PEH"},
	}
	for i, parts := range splits {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			events := []string{roleChunk, chunk("Sure, use the key ")}
			for _, p := range parts {
				events = append(events, chunk(p))
			}
			events = append(events, chunk(" to log in. Anything else?"), done)
			writes, out := run(t, events, pipeline(t, scanner.ModeBlock), 64)
			all := strings.Join(writes, "")
			for _, p := range parts {
				if len(p) >= 4 && strings.Contains(all, p) {
					t.Fatalf("part %q of the secret reached the client: %q", p, all)
				}
			}
			if strings.Contains(all, "[DONE]") {
				t.Error("the success terminator must be withheld after a block")
			}
			if !out.Blocked || !strings.Contains(writes[len(writes)-1], "no secrets in answers") {
				t.Errorf("the last write must be the provider-shaped block event: %q", writes[len(writes)-1])
			}
			if !strings.HasPrefix(writes[0], "data: ") || writes[0] != roleChunk {
				t.Errorf("the text-less first event should pass unchanged, got %q", writes[0])
			}
		})
	}
}

// The event that pushes the answer past the release threshold may itself
// end with the head of a secret: only text a full hold-back behind the end
// may leave, or the head leaks before the tail arrives.
func TestSecretHeadInThresholdEventIsHeld(t *testing.T) {
	prose := strings.Repeat("The weather in Paris is mild in spring. ", 5)
	filler := strings.Repeat("Here is more context. ", 4)
	events := []string{roleChunk, chunk(prose), chunk(filler + fakeKey[:8]), chunk(fakeKey[8:]), chunk(" end"), done}
	writes, out := run(t, events, pipeline(t, scanner.ModeBlock), 64)
	all := strings.Join(writes, "")
	if strings.Contains(all, fakeKey[:8]) {
		t.Fatalf("the head of the secret reached the client: %q", all)
	}
	if !out.Blocked {
		t.Error("the split secret must block the stream")
	}
	if !strings.Contains(all, "mild in spring") {
		t.Error("text a full hold-back before the secret should have been released")
	}
}

func TestSecretRedactedAcrossEvents(t *testing.T) {
	events := []string{roleChunk, chunk("key: "), chunk(fakeKey[:10]), chunk(fakeKey[10:]), chunk(" done"), done}
	writes, out := run(t, events, pipeline(t, scanner.ModeModify), 32)
	all := strings.Join(writes, "")
	if strings.Contains(all, fakeKey[:10]) || strings.Contains(all, fakeKey[10:]) {
		t.Fatalf("secret bytes reached the client: %q", all)
	}
	if !strings.Contains(out.Redacted, "[AWS_ACCESS_KEY_ID_1]") {
		t.Errorf("redacted answer %q lacks the placeholder", out.Redacted)
	}
	if !strings.HasSuffix(all, done) {
		t.Error("a redacted stream still ends with its terminator")
	}
	for _, w := range writes {
		data := strings.TrimSuffix(strings.TrimPrefix(w, "data: "), "\n\n")
		if data != "[DONE]" && !json.Valid([]byte(data)) {
			t.Errorf("rewritten event is not valid JSON: %q", w)
		}
	}
}

// A text-less event must reach the client before the upstream sends more:
// the time to first byte is the upstream's.
func TestTextlessEventReleasedImmediately(t *testing.T) {
	pr, pw := io.Pipe()
	emitted := make(chan string, 16)
	go func() {
		_, _ = Run(context.Background(), Options{
			Stream: openAIStream(pr),
			Screen: pipeline(t, scanner.ModeBlock),
			Emit:   func(b []byte) error { emitted <- string(b); return nil },
		})
		close(emitted)
	}()
	io.WriteString(pw, roleChunk)
	select {
	case got := <-emitted:
		if got != roleChunk {
			t.Fatalf("got %q", got)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the first event was held back although it carries no text")
	}
	io.WriteString(pw, chunk("hello"))
	io.WriteString(pw, done)
	pw.Close()
	var rest bytes.Buffer
	for w := range emitted {
		rest.WriteString(w)
	}
	if rest.String() != chunk("hello")+done {
		t.Errorf("rest of the stream: %q", rest.String())
	}
}

// The Responses API repeats streamed text in *.done and response.completed
// events, which are decoded before the held-back deltas are redacted: the
// repeat must carry the redaction too.
func TestResponsesRepeatsCarryTheRedaction(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	full := "key " + fakeKey
	stream := ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","status":"in_progress","output":[]}}`) +
		ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,"content_index":0,"delta":"key `+fakeKey[:9]+`"}`) +
		ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":2,"item_id":"m","output_index":0,"content_index":0,"delta":"`+fakeKey[9:]+`"}`) +
		ev("response.output_text.done", `{"type":"response.output_text.done","sequence_number":3,"item_id":"m","output_index":0,"content_index":0,"text":"`+full+`"}`) +
		ev("response.completed", `{"type":"response.completed","sequence_number":4,"response":{"id":"r","object":"response","status":"completed","output":[{"id":"m","type":"message","role":"assistant","content":[{"type":"output_text","text":"`+full+`","annotations":[]}]}]}}`)
	f, err := format.ByName(format.NameOpenAIResponses)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	res, err := Run(context.Background(), Options{
		Stream:   f.NewStream(strings.NewReader(stream)),
		Screen:   pipeline(t, scanner.ModeModify),
		HoldBack: 64,
		Emit:     func(b []byte) error { out.Write(b); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), fakeKey[:9]) || strings.Contains(out.String(), fakeKey[9:]) {
		t.Fatalf("the secret reached the client in a repeat: %s", out.String())
	}
	if strings.Count(out.String(), "[AWS_ACCESS_KEY_ID_1]") < 2 {
		t.Errorf("the placeholder should appear in the deltas and the repeats: %s", out.String())
	}
	if res.Blocked {
		t.Error("modify mode must not block")
	}
}
