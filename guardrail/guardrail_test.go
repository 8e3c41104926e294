package guardrail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/promptwall/promptwall/guardrail/guardrailtest"
	"github.com/promptwall/promptwall/scanner"
	"github.com/promptwall/promptwall/scanner/pii"
	"github.com/promptwall/promptwall/scanner/secrets"
)

var update = flag.Bool("update", false, "rewrite the answers of the fixtures in testdata")

const testRecordID = "019a0000-0000-7000-8000-000000000001"

// testPipeline blocks secrets and redacts e-mail addresses, both directions:
// one policy that exercises every action the callers understand.
func testPipeline(t testing.TB) *scanner.Pipeline {
	t.Helper()
	sec, err := secrets.New(secrets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mail, err := pii.New(pii.Config{Entities: []string{"EMAIL_ADDRESS"}})
	if err != nil {
		t.Fatal(err)
	}
	both := []scanner.Direction{scanner.Input, scanner.Output}
	p, err := scanner.NewPipeline([]scanner.Stage{
		{Setting: scanner.Setting{ID: "secrets", Version: "1", Enabled: true, Mode: scanner.ModeBlock, Blocking: true,
			FlagMessage: "Remove the secret and try again.", Timeout: time.Minute, Directions: both}, Scanner: sec},
		{Setting: scanner.Setting{ID: "pii", Version: "1", Enabled: true, Mode: scanner.ModeModify, Blocking: true,
			Timeout: time.Minute, Directions: both}, Scanner: mail},
	}, scanner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFixtures replays every caller's request through its shape and the
// test pipeline, and checks the answer both byte for byte and as the caller
// reads it.
func TestFixtures(t *testing.T) {
	p := testPipeline(t)
	for _, fx := range guardrailtest.Load(t, "testdata") {
		t.Run(fx.Name, func(t *testing.T) {
			if len(fx.Source) == 0 {
				t.Fatal("a fixture must cite the caller's source it was taken from")
			}
			shape := ForPath(fx.Path)
			if shape == nil {
				t.Fatalf("no shape serves %s", fx.Path)
			}
			if shape.Name() != fx.Shape {
				t.Fatalf("%s is served by %s, fixture lives under %s", fx.Path, shape.Name(), fx.Shape)
			}
			c, err := shape.Parse(fx.Path, fx.Request)
			if err != nil {
				t.Fatal(err)
			}
			res := p.Screen(context.Background(), &c.Conversation, c.Direction)
			if string(res.Outcome) != fx.Outcome {
				t.Fatalf("outcome %s, want %s", res.Outcome, fx.Outcome)
			}
			answer, err := shape.Answer(c, VerdictOf(res, "Blocked by policy.", testRecordID))
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				if err := fx.Rewrite(answer); err != nil {
					t.Fatal(err)
				}
			}
			if !guardrailtest.SameJSON(t, answer, fx.Answer) {
				t.Errorf("answer\n%s\nwant\n%s", answer, fx.Answer)
			}
			if got := callerReads[shape.Name()](t, c, answer); got != fx.Caller {
				t.Errorf("the caller would %s, want %s", got, fx.Caller)
			}
			// Nothing a scanner acted on is handed back in clear: a refusal
			// quotes none of it, a redaction replaced it.
			if res.Outcome == scanner.Blocked || res.Outcome == scanner.Modified {
				for _, v := range foundValues(c, res) {
					if bytes.Contains(answer, []byte(v)) {
						t.Errorf("the answer holds a detected value in clear")
					}
				}
			}
		})
	}
}

func foundValues(c *Check, res *scanner.Result) []string {
	var out []string
	for _, sr := range res.Scanners {
		for _, f := range sr.Findings {
			if f.End > f.Start {
				out = append(out, c.Conversation.Messages[f.Message].Text[f.Start:f.End])
			}
		}
	}
	return out
}

// callerReads decides, for each shape, what the caller does with an answer,
// following the caller's own response parser.
var callerReads = map[string]func(t *testing.T, c *Check, answer []byte) string{
	// LiteLLM prompt_security.py (call_prompt_security_guardrail and
	// _on_output): result.prompt / result.response, action "block" raises,
	// "modify" takes modified_messages / modified_text. Portkey's
	// protectPrompt.ts: verdict = action != 'block' (1.15.2: result.passed),
	// modified_text != null transforms.
	NamePromptSecurity: func(t *testing.T, c *Check, answer []byte) string {
		var a struct {
			Result map[string]*struct {
				Passed           *bool             `json:"passed"`
				Action           string            `json:"action"`
				ModifiedText     *string           `json:"modified_text"`
				ModifiedMessages []json.RawMessage `json:"modified_messages"`
			} `json:"result"`
		}
		mustUnmarshal(t, answer, &a)
		key := "prompt"
		if c.Direction == scanner.Output {
			key = "response"
		}
		r := a.Result[key]
		if r == nil || r.Passed == nil {
			t.Fatalf("no result.%s.passed in %s", key, answer)
		}
		if (r.Action == "block") == *r.Passed {
			t.Fatalf("passed and action disagree: %s", answer)
		}
		switch {
		case r.Action == "block":
			return "block"
		case r.Action == "modify" && (r.ModifiedText != nil || len(r.ModifiedMessages) > 0):
			return "modify"
		case r.ModifiedText != nil:
			t.Fatalf("modified_text set without a modification: Portkey would transform: %s", answer)
		}
		return "pass"
	},
	// LiteLLM generic_guardrail_api.py: action BLOCKED raises, texts (when
	// present) replace the inputs.
	NameLiteLLM: func(t *testing.T, _ *Check, answer []byte) string {
		var a struct {
			Action string   `json:"action"`
			Texts  []string `json:"texts"`
		}
		mustUnmarshal(t, answer, &a)
		switch {
		case a.Action == "BLOCKED":
			return "block"
		case len(a.Texts) > 0:
			return "modify"
		}
		return "pass"
	},
	// Portkey webhook.ts: verdict, transformedData.request.json before the
	// request, transformedData.response.json after it.
	NamePortkey: func(t *testing.T, c *Check, answer []byte) string {
		var a struct {
			Verdict         *bool `json:"verdict"`
			TransformedData struct {
				Request  struct{ JSON json.RawMessage } `json:"request"`
				Response struct{ JSON json.RawMessage } `json:"response"`
			} `json:"transformedData"`
		}
		mustUnmarshal(t, answer, &a)
		if a.Verdict == nil {
			t.Fatalf("no verdict: %s", answer)
		}
		body := a.TransformedData.Request.JSON
		if c.Direction == scanner.Output {
			body = a.TransformedData.Response.JSON
		}
		switch {
		case !*a.Verdict:
			return "block"
		case len(body) > 0 && string(body) != "null":
			return "modify"
		}
		return "pass"
	},
	// LiteLLM bedrock_guardrails.py: _should_raise_guardrail_blocked_exception
	// raises when action is GUARDRAIL_INTERVENED and an assessment's policy
	// entry says BLOCKED; otherwise outputs replace the texts.
	NameBedrock: func(t *testing.T, _ *Check, answer []byte) string {
		var a struct {
			Action      string `json:"action"`
			Outputs     []struct{ Text string }
			Assessments []struct {
				TopicPolicy *struct {
					Topics []struct{ Action string }
				} `json:"topicPolicy"`
				SensitiveInformationPolicy *struct {
					Regexes []struct{ Action string }
				} `json:"sensitiveInformationPolicy"`
			}
		}
		mustUnmarshal(t, answer, &a)
		if a.Action != "GUARDRAIL_INTERVENED" {
			return "pass"
		}
		for _, as := range a.Assessments {
			if as.TopicPolicy != nil {
				for _, tp := range as.TopicPolicy.Topics {
					if tp.Action == "BLOCKED" {
						return "block"
					}
				}
			}
			if as.SensitiveInformationPolicy != nil {
				for _, r := range as.SensitiveInformationPolicy.Regexes {
					if r.Action == "BLOCKED" {
						return "block"
					}
				}
			}
		}
		if len(a.Outputs) > 0 {
			return "modify"
		}
		return "pass"
	},
}

func mustUnmarshal(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("answer %s: %v", b, err)
	}
}

// TestParseErrors checks that every malformed request is refused with a 400
// naming the field to fix.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, path, body, param string
	}{
		{"not json", PathLiteLLM, `{"texts": [`, ""},
		{"litellm input_type missing", PathLiteLLM, `{"texts": ["hi"]}`, "input_type"},
		{"litellm input_type unknown", PathLiteLLM, `{"texts": ["hi"], "input_type": "both"}`, "input_type"},
		{"litellm texts not strings", PathLiteLLM, `{"texts": [1], "input_type": "request"}`, "texts"},
		{"litellm message content", PathLiteLLM, `{"input_type": "request", "structured_messages": [{"role": "user", "content": 7}]}`, "structured_messages[0].content"},
		{"protect without text", PathPromptSecurity, `{"user": "ada"}`, "messages"},
		{"protect with two forms", PathPromptSecurity, `{"prompt": "a", "response": "b"}`, "messages"},
		{"protect prompt not a string", PathPromptSecurity, `{"prompt": ["a"]}`, "prompt"},
		{"protect part text", PathPromptSecurity, `{"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}`, "messages[0].content[0].text"},
		{"bedrock source", "/guardrail/g1/version/1/apply", `{"source": "BOTH", "content": []}`, "source"},
		{"bedrock content", "/guardrail/g1/version/1/apply", `{"source": "INPUT", "content": {"text": "a"}}`, "content"},
		{"portkey event", PathPortkey, `{"request": {"json": {}, "text": "a"}, "eventType": "onError"}`, "eventType"},
		{"portkey no text", PathPortkey, `{"request": {}, "eventType": "beforeRequestHook"}`, "request"},
		{"portkey unreadable body", PathPortkey, `{"request": {"json": {"messages": "x"}}, "requestType": "chatComplete", "eventType": "beforeRequestHook"}`, "request.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			shape := ForPath(tc.path)
			if shape == nil {
				t.Fatalf("no shape at %s", tc.path)
			}
			_, err := shape.Parse(tc.path, []byte(tc.body))
			var ge *Error
			if !errors.As(err, &ge) {
				t.Fatalf("want *Error, got %v", err)
			}
			if ge.Status != http.StatusBadRequest || ge.Param != tc.param || ge.Message == "" {
				t.Errorf("got %+v, want 400 naming %q", ge, tc.param)
			}
			var shaped struct {
				Error struct{ Code, Message, Param string }
			}
			if err := json.Unmarshal(ge.JSON(), &shaped); err != nil || shaped.Error.Code == "" || shaped.Error.Param != tc.param {
				t.Errorf("error JSON %s", ge.JSON())
			}
		})
	}
}

func TestForPath(t *testing.T) {
	tests := []struct{ path, want string }{
		{"/api/protect", NamePromptSecurity},
		{"/guard/api/protect", NamePromptSecurity},
		{"/beta/litellm_basic_guardrail_api", NameLiteLLM},
		{"/portkey/webhook", NamePortkey},
		{"/guardrail/gr7x2k9/version/DRAFT/apply", NameBedrock},
		{"/bedrock/guardrail/g/version/3/apply", NameBedrock},
		{"/guardrail//version/1/apply", ""},
		{"/guardrail/a/b/version/1/apply", ""},
		{"/guardrail/a/version/1/apply/x", ""},
		{"/v1/chat/completions", ""},
	}
	for _, tc := range tests {
		got := ""
		if s := ForPath(tc.path); s != nil {
			got = s.Name()
		}
		if got != tc.want {
			t.Errorf("ForPath(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
	for _, name := range Names {
		if s, err := ByName(name); err != nil || s.Name() != name {
			t.Errorf("ByName(%q) = %v, %v", name, s, err)
		}
	}
	if _, err := ByName("lakera"); err == nil {
		t.Error("ByName accepted an unknown shape")
	}
}

// TestMetadataBounded checks that a caller cannot grow a record through its
// metadata.
func TestMetadataBounded(t *testing.T) {
	long := strings.Repeat("é", 400)
	extra := map[string]any{}
	for i := range 40 {
		extra[fmt.Sprintf("k%02d", i)] = long
	}
	body, _ := json.Marshal(map[string]any{
		"request": map[string]any{"text": "hi"}, "eventType": "beforeRequestHook",
		"provider": long, "metadata": extra,
	})
	c, err := portkey{}.Parse(PathPortkey, body)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Metadata
	if len(m.Provider) > maxMetaLen || !utf8.ValidString(m.Provider) || len(m.Extra) != maxExtra {
		t.Errorf("provider %d bytes, %d extra entries", len(m.Provider), len(m.Extra))
	}
	for k, v := range m.Extra {
		if len(v) > maxMetaLen || !utf8.ValidString(v) {
			t.Errorf("extra %s: %d bytes", k, len(v))
		}
	}
}

// BenchmarkCheck measures one check as the handler runs it, per shape:
// parse the caller's request, screen it with the test pipeline, render the
// answer. It is what a caller waits for beyond the network (Portkey's
// webhook gives 3 s).
func BenchmarkCheck(b *testing.B) {
	p := testPipeline(b)
	for _, fx := range guardrailtest.Load(b, "testdata") {
		shape := ForPath(fx.Path)
		b.Run(strings.TrimSuffix(strings.TrimPrefix(fx.Name, "testdata/"), ".json"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c, err := shape.Parse(fx.Path, fx.Request)
				if err != nil {
					b.Fatal(err)
				}
				res := p.Screen(context.Background(), &c.Conversation, c.Direction)
				if _, err := shape.Answer(c, VerdictOf(res, "Blocked.", testRecordID)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
