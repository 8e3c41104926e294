package caddymodule_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// sdkUpstream answers like OpenAI (/v1/chat/completions) and Anthropic
// (/v1/messages), streamed or not, with the text the test sets.
type sdkUpstream struct {
	*httptest.Server
	answer string
	// chunks, when set, are the streamed events' texts instead of the
	// answer's words; reasoning is sent as the OpenAI message's (or
	// first delta's) reasoning_content, as DeepSeek and vLLM do.
	chunks    []string
	reasoning string
}

func newSDKUpstream(t *testing.T) *sdkUpstream {
	u := &sdkUpstream{answer: "Paris is the capital of France."}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream bool `json:"stream"`
		}
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &req)
		words := strings.SplitAfter(u.answer, " ")
		if u.chunks != nil {
			words = u.chunks
		}
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions") && !req.Stream:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":%q,"reasoning_content":%q},"finish_reason":"stop"}]}`, u.answer, u.reasoning)
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			w.Header().Set("Content-Type", "text/event-stream")
			if u.reasoning != "" {
				d, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk",
					"choices": []map[string]any{{"index": 0, "delta": map[string]string{"reasoning_content": u.reasoning}}}})
				fmt.Fprintf(w, "data: %s\n\n", d)
			}
			for _, word := range words {
				fmt.Fprint(w, sseChunk(word))
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		case strings.HasSuffix(r.URL.Path, "/messages") && !req.Stream:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":7}}`, u.answer)
		case strings.HasSuffix(r.URL.Path, "/messages"):
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-test\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n")
			fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
			for _, word := range words {
				d, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": word}})
				fmt.Fprintf(w, "event: content_block_delta\ndata: %s\n\n", d)
				w.(http.Flusher).Flush()
			}
			fmt.Fprint(w, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
			fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":7}}\n\n")
			fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

const sdkFlagMessage = "Secrets are not allowed here."

func sdkGateway(t *testing.T) (*caddytest.Tester, *sdkUpstream) {
	up := newSDKUpstream(t)
	tester := caddytest.NewTester(t)
	endpoint := `endpoint default {
			scanner secrets {
				direction input output
				flag_message "` + sdkFlagMessage + `"
			}
		}`
	tester.InitServer(gatewayConfig(filepath.Join(t.TempDir(), "pw.db"), up.Listener.Addr().String(), endpoint, "stream_hold_back 32"), "caddyfile")
	return tester, up
}

func TestOpenAISDKThroughGateway(t *testing.T) {
	tester, up := sdkGateway(t)
	client := openai.NewClient(option.WithBaseURL(gatewayURL("/v1/")), option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0), option.WithHTTPClient(tester.Client))
	ctx := context.Background()
	params := func(text string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}}
	}

	t.Run("allowed", func(t *testing.T) {
		resp, err := client.Chat.Completions.New(ctx, params("What is the capital of France?"))
		if err != nil || resp.Choices[0].Message.Content != up.answer {
			t.Fatalf("err %v, resp %+v", err, resp)
		}
	})
	t.Run("blocked request is the SDK's API error", func(t *testing.T) {
		_, err := client.Chat.Completions.New(ctx, params("my key is "+fakeAWSKey))
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("want *openai.Error, got %T %v", err, err)
		}
		if apiErr.StatusCode != http.StatusForbidden || apiErr.Message != sdkFlagMessage {
			t.Errorf("status %d message %q", apiErr.StatusCode, apiErr.Message)
		}
	})
	t.Run("allowed stream", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, params("Capital of France?"))
		var text strings.Builder
		for stream.Next() {
			if c := stream.Current(); len(c.Choices) > 0 {
				text.WriteString(c.Choices[0].Delta.Content)
			}
		}
		if err := stream.Err(); err != nil || text.String() != up.answer {
			t.Fatalf("err %v, text %q", err, text.String())
		}
	})
	t.Run("stream blocked mid-answer is a stream error", func(t *testing.T) {
		up.answer = "Sure, the deploy key is " + fakeAWSKey + " and it never expires."
		defer func() { up.answer = "Paris is the capital of France." }()
		stream := client.Chat.Completions.NewStreaming(ctx, params("Which key?"))
		var text strings.Builder
		for stream.Next() {
			if c := stream.Current(); len(c.Choices) > 0 {
				text.WriteString(c.Choices[0].Delta.Content)
			}
		}
		err := stream.Err()
		if err == nil || !strings.Contains(err.Error(), sdkFlagMessage) {
			t.Fatalf("want a stream error carrying the flag message, got %v", err)
		}
		if strings.Contains(text.String(), fakeAWSKey[:8]) {
			t.Errorf("part of the secret reached the SDK: %q", text.String())
		}
	})
}

func TestAnthropicSDKThroughGateway(t *testing.T) {
	tester, up := sdkGateway(t)
	client := anthropic.NewClient(anthropicoption.WithBaseURL(gatewayURL("/")), anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithMaxRetries(0), anthropicoption.WithHTTPClient(tester.Client))
	ctx := context.Background()
	params := func(text string) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 64,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))}}
	}

	t.Run("allowed", func(t *testing.T) {
		msg, err := client.Messages.New(ctx, params("What is the capital of France?"))
		if err != nil || len(msg.Content) == 0 || msg.Content[0].Text != up.answer {
			t.Fatalf("err %v, msg %+v", err, msg)
		}
	})
	t.Run("blocked request is the SDK's API error", func(t *testing.T) {
		_, err := client.Messages.New(ctx, params("my key is "+fakeAWSKey))
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) {
			t.Fatalf("want *anthropic.Error, got %T %v", err, err)
		}
		if apiErr.StatusCode != http.StatusForbidden || !strings.Contains(apiErr.Error(), sdkFlagMessage) {
			t.Errorf("status %d error %q", apiErr.StatusCode, apiErr.Error())
		}
	})
	t.Run("allowed stream", func(t *testing.T) {
		stream := client.Messages.NewStreaming(ctx, params("Capital of France?"))
		var text strings.Builder
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "content_block_delta" {
				text.WriteString(ev.Delta.Text)
			}
		}
		if err := stream.Err(); err != nil || text.String() != up.answer {
			t.Fatalf("err %v, text %q", err, text.String())
		}
	})
	t.Run("stream blocked mid-answer is a stream error", func(t *testing.T) {
		up.answer = "Sure, the deploy key is " + fakeAWSKey + " and it never expires."
		defer func() { up.answer = "Paris is the capital of France." }()
		stream := client.Messages.NewStreaming(ctx, params("Which key?"))
		var text strings.Builder
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "content_block_delta" {
				text.WriteString(ev.Delta.Text)
			}
		}
		err := stream.Err()
		if err == nil || !strings.Contains(err.Error(), sdkFlagMessage) {
			t.Fatalf("want a stream error carrying the flag message, got %v", err)
		}
		if strings.Contains(text.String(), fakeAWSKey[:8]) {
			t.Errorf("part of the secret reached the SDK: %q", text.String())
		}
	})
}

// splitAnswer is an answer whose secret the upstream streams split across
// n events.
func splitAnswer(n int) (answer string, chunks []string) {
	chunks = []string{"Sure, ", "the deploy ", "key is "}
	for i := range n {
		chunks = append(chunks, fakeAWSKey[i*len(fakeAWSKey)/n:(i+1)*len(fakeAWSKey)/n])
	}
	chunks = append(chunks, " and it ", "never expires.")
	return strings.Join(chunks, ""), chunks
}

// TestSDKStreamsNeverCarryASplitSecret streams a secret split across 2, 3
// and 10 events to openai-go and anthropic-sdk-go: each SDK raises the API
// error and has received no byte of the secret.
func TestSDKStreamsNeverCarryASplitSecret(t *testing.T) {
	tester, up := sdkGateway(t)
	oai := openai.NewClient(option.WithBaseURL(gatewayURL("/v1/")), option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0), option.WithHTTPClient(tester.Client))
	ant := anthropic.NewClient(anthropicoption.WithBaseURL(gatewayURL("/")), anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithMaxRetries(0), anthropicoption.WithHTTPClient(tester.Client))
	ctx := context.Background()
	sdks := map[string]func() (string, error){
		"openai-go": func() (string, error) {
			stream := oai.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-test",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Which key?")}})
			var text strings.Builder
			for stream.Next() {
				if c := stream.Current(); len(c.Choices) > 0 {
					text.WriteString(c.Choices[0].Delta.Content)
				}
			}
			return text.String(), stream.Err()
		},
		"anthropic-sdk-go": func() (string, error) {
			stream := ant.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 64,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Which key?"))}})
			var text strings.Builder
			for stream.Next() {
				if ev := stream.Current(); ev.Type == "content_block_delta" {
					text.WriteString(ev.Delta.Text)
				}
			}
			return text.String(), stream.Err()
		},
	}
	for name, read := range sdks {
		for _, n := range []int{2, 3, 10} {
			t.Run(fmt.Sprint(name, "/", n), func(t *testing.T) {
				answer, chunks := splitAnswer(n)
				up.answer, up.chunks = answer, chunks
				defer func() { up.answer, up.chunks = "Paris is the capital of France.", nil }()
				text, err := read()
				if err == nil || !strings.Contains(err.Error(), sdkFlagMessage) {
					t.Fatalf("want a stream error carrying the flag message, got %v", err)
				}
				if !strings.HasPrefix(answer[:strings.Index(answer, fakeAWSKey)], text) {
					t.Errorf("the SDK received %q, past the secret's start", text)
				}
			})
		}
	}
}

// TestOpenAISDKReasoningIsScreened checks that a secret in
// reasoning_content, which OpenAI-compatible servers send besides content,
// is blocked in answers and in streams.
func TestOpenAISDKReasoningIsScreened(t *testing.T) {
	tester, up := sdkGateway(t)
	client := openai.NewClient(option.WithBaseURL(gatewayURL("/v1/")), option.WithAPIKey("sk-test"),
		option.WithMaxRetries(0), option.WithHTTPClient(tester.Client))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Think first.")}}
	up.reasoning = "The user wants the key " + fakeAWSKey + ", I will not say it."
	t.Run("answer", func(t *testing.T) {
		_, err := client.Chat.Completions.New(ctx, params)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.Message != sdkFlagMessage {
			t.Fatalf("want the API error with the flag message, got %v", err)
		}
	})
	t.Run("stream", func(t *testing.T) {
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		var raw strings.Builder
		for stream.Next() {
			raw.WriteString(stream.Current().RawJSON())
		}
		if err := stream.Err(); err == nil || !strings.Contains(err.Error(), sdkFlagMessage) {
			t.Fatalf("want a stream error carrying the flag message, got %v", err)
		}
		if strings.Contains(raw.String(), fakeAWSKey[:8]) {
			t.Errorf("the secret reached the SDK: %s", raw.String())
		}
	})
}
