package caddymodule_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/promptwall/promptwall/internal/testsvc"
)

// sdkJSDir pins the JavaScript SDKs (package.json, package-lock.json);
// `npm ci` there installs them (.ci/run does).
const sdkJSDir = "testdata/sdks"

// jsSDKAnswer is the answer the upstream streams for a prompt: the one with
// a deploy key, split across three events, when the prompt asks for a key;
// a plain sentence otherwise.
func jsSDKAnswer(prompt string) (answer string, chunks []string) {
	if strings.Contains(prompt, "key") {
		return splitAnswer(3)
	}
	answer = "Paris is the capital of France."
	return answer, strings.SplitAfter(answer, " ")
}

// jsSDKUpstream streams an answer in the wire format the request's path
// names: Gemini streamGenerateContent (SSE), Ollama /api/chat (NDJSON),
// OpenAI Chat Completions and Responses (SSE); one flush per event.
func jsSDKUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		answer, chunks := jsSDKAnswer(string(body))
		var events []string
		sse := func(event string, v any) {
			b, _ := json.Marshal(v)
			prefix := ""
			if event != "" {
				prefix = "event: " + event + "\n"
			}
			events = append(events, prefix+"data: "+string(b)+"\n\n")
		}
		path := r.URL.Path
		switch {
		case strings.HasSuffix(path, ":streamGenerateContent"):
			w.Header().Set("Content-Type", "text/event-stream")
			for i, c := range chunks {
				cand := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": []map[string]string{{"text": c}}}}
				if i == len(chunks)-1 {
					cand["finishReason"] = "STOP"
				}
				sse("", map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-test"})
			}
		case strings.HasSuffix(path, "/api/chat"):
			w.Header().Set("Content-Type", "application/x-ndjson")
			line := func(content string, done bool) {
				v := map[string]any{"model": "llama-test", "created_at": "2026-11-24T09:00:00Z",
					"message": map[string]string{"role": "assistant", "content": content}, "done": done}
				if done {
					v["done_reason"] = "stop"
				}
				b, _ := json.Marshal(v)
				events = append(events, string(b)+"\n")
			}
			for _, c := range chunks {
				line(c, false)
			}
			line("", true)
		case strings.HasSuffix(path, "/chat/completions"):
			w.Header().Set("Content-Type", "text/event-stream")
			for _, c := range chunks {
				events = append(events, sseChunk(c))
			}
			events = append(events, "data: [DONE]\n\n")
		case strings.HasSuffix(path, "/responses"):
			w.Header().Set("Content-Type", "text/event-stream")
			seq := 0
			ev := func(typ string, v map[string]any) {
				v["type"], v["sequence_number"] = typ, seq
				seq++
				sse(typ, v)
			}
			resp := func(status string, output []any) map[string]any {
				return map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test", "status": status, "output": output}
			}
			item := func(status string, content []any) map[string]any {
				return map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": status, "content": content}
			}
			done := []any{map[string]any{"type": "output_text", "text": answer, "annotations": []any{}}}
			ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
			ev("response.output_item.added", map[string]any{"output_index": 0, "item": item("in_progress", []any{})})
			for _, c := range chunks {
				ev("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": c, "logprobs": []any{}})
			}
			ev("response.output_text.done", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": answer})
			ev("response.output_item.done", map[string]any{"output_index": 0, "item": item("completed", done)})
			completed := resp("completed", []any{item("completed", done)})
			completed["usage"] = map[string]int{"input_tokens": 5, "output_tokens": 7, "total_tokens": 12}
			ev("response.completed", map[string]any{"response": completed})
		default:
			http.NotFound(w, r)
			return
		}
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// jsSDKResult is what stream.mjs prints: the text the application got and
// the error the SDK raised.
type jsSDKResult struct {
	Text  string `json:"text"`
	Error *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Status  *int   `json:"status"`
	} `json:"error"`
}

// nodeForSDKs returns the node binary and the script, or skips the test
// with what to install (fails under CI, where nothing may be skipped).
func nodeForSDKs(t *testing.T) (node, script string) {
	t.Helper()
	missing := func(msg string) {
		if testsvc.InCI() {
			t.Fatalf("%s under CI=true: .ci/run installs it", msg)
		}
		t.Skipf("%s: install Debian's nodejs and npm, then run `npm ci --prefix caddymodule/%s` (.ci/run does)", msg, sdkJSDir)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	for _, pkg := range []string{"@google/genai", "ollama", "ai", "@ai-sdk/openai"} {
		if _, err := os.Stat(filepath.Join(sdkJSDir, "node_modules", pkg, "package.json")); err != nil {
			missing("the JavaScript SDK " + pkg + " is not installed")
		}
	}
	script, err = filepath.Abs(filepath.Join(sdkJSDir, "stream.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	return node, script
}

func runJSSDK(t *testing.T, node, script, sdk, prompt string) jsSDKResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, sdk, gatewayURL(""), prompt)
	cmd.Dir = filepath.Dir(script)
	stderr := &boundedBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", sdk, err, stderr.String())
	}
	var res jsSDKResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s printed %q: %v\n%s", sdk, out, err, stderr.String())
	}
	return res
}

// TestJSSDKStreamsThroughGateway streams through the gateway with the
// official SDKs that have no Go client here: Google's @google/genai,
// ollama-js and the Vercel ai SDK (OpenAI Chat Completions and Responses).
// A plain answer arrives as text; an answer whose secret is split across
// events surfaces as the SDK's API error carrying the flag message (not a
// parse or validation error), and no byte of the secret reaches it.
func TestJSSDKStreamsThroughGateway(t *testing.T) {
	node, script := nodeForSDKs(t)
	up := jsSDKUpstream(t)
	tester := caddytest.NewTester(t)
	endpoint := `endpoint default {
			scanner secrets {
				direction output
				flag_message "` + sdkFlagMessage + `"
			}
		}`
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), endpoint, "stream_hold_back 32"), "caddyfile")

	// errNames are the errors each SDK raises for a provider's streamed
	// error: genai's ApiError, ollama-js's Error with the message as sent;
	// the ai SDK throws its AI_APICallError when the error comes before
	// any text and otherwise hands the provider's error object on as a
	// stream part. Its parse and validation errors (AI_TypeValidationError,
	// AI_JSONParseError) are failures.
	sdks := []struct {
		name     string
		errNames []string
	}{
		{"genai", []string{"ApiError"}},
		{"ollama", []string{"Error"}},
		{"ai-chat", []string{"AI_APICallError", "object"}},
		{"ai-responses", []string{"AI_APICallError", "object"}},
	}
	for _, sdk := range sdks {
		t.Run(sdk.name+"/plain answer", func(t *testing.T) {
			prompt := "What is the capital of France?"
			want, _ := jsSDKAnswer(prompt)
			res := runJSSDK(t, node, script, sdk.name, prompt)
			if res.Error != nil || res.Text != want {
				t.Fatalf("text %q, error %+v; want %q and no error", res.Text, res.Error, want)
			}
		})
		t.Run(sdk.name+"/split secret blocked", func(t *testing.T) {
			prompt := "Which deploy key?"
			answer, _ := jsSDKAnswer(prompt)
			res := runJSSDK(t, node, script, sdk.name, prompt)
			if res.Error == nil {
				t.Fatalf("no error; the SDK received %q", res.Text)
			}
			if !slices.Contains(sdk.errNames, res.Error.Name) || !strings.Contains(res.Error.Message, sdkFlagMessage) {
				t.Errorf("error %s %q; want one of %v carrying %q", res.Error.Name, res.Error.Message, sdk.errNames, sdkFlagMessage)
			}
			if before := answer[:strings.Index(answer, fakeAWSKey)]; !strings.HasPrefix(before, res.Text) {
				t.Errorf("the SDK received %q, past the secret's start", res.Text)
			}
		})
	}
}
