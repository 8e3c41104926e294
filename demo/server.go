package demo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// MaxRequestBytes bounds a request body; larger ones get 413.
const MaxRequestBytes = 1 << 20

// Created is the "created" time of every answer (2026-01-01T00:00:00Z), so
// that answers are byte for byte the same on every run.
const Created = 1767225600

// Server answers OpenAI Chat Completions requests (POST any path ending in
// /chat/completions) with Reply, streamed as server-sent events when the
// request asks for it, and lists its one model at GET .../models.
type Server struct {
	// ChunkDelay is the pause before each streamed chunk after the first,
	// so that a terminal shows the answer arriving. Zero sends them back
	// to back.
	ChunkDelay time.Duration
}

// chatRequest is the part of a Chat Completions request the model reads.
type chatRequest struct {
	Model    string        `json:"model"`
	Messages []chatMessage `json:"messages"`
	Stream   bool          `json:"stream"`
	Options  *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type chatMessage struct {
	Role    string  `json:"role"`
	Content content `json:"content"`
}

// content is a message's text: a string, or the text parts of an array of
// content parts.
type content string

func (c *content) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*c = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = content(s)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content must be a string or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	*c = content(strings.Join(texts, "\n"))
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/models") && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "demo", "object": "model", "created": Created, "owned_by": "promptwall"},
		}})
	case !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		writeError(w, http.StatusNotFound, "not_found", "", "The demo model serves POST /v1/chat/completions and GET /v1/models.")
	case r.Method != http.MethodPost:
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "", "Use POST for /v1/chat/completions.")
	default:
		s.complete(w, r)
	}
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "request_too_large", "", fmt.Sprintf("The request body exceeds %d bytes.", MaxRequestBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_body", "", "The request body could not be read.")
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_json", "", "The request body is not a valid Chat Completions request: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_value", "messages", "messages must be a non-empty array.")
		return
	}
	msgs := make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = Message{Role: m.Role, Content: string(m.Content)}
	}
	answer := Reply(msgs)
	if req.Model == "" {
		req.Model = "demo"
	}
	id := completionID(body)
	usage := map[string]int{"prompt_tokens": tokens(body), "completion_tokens": tokens([]byte(answer))}
	usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
	if !req.Stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": Created, "model": req.Model,
			"choices": []any{map[string]any{
				"index": 0, "message": map[string]any{"role": "assistant", "content": answer}, "finish_reason": "stop",
			}},
			"usage": usage,
		})
		return
	}
	var final map[string]int
	if req.Options != nil && req.Options.IncludeUsage {
		final = usage
	}
	s.stream(w, r, id, req.Model, answer, final)
}

// stream sends answer as Chat Completions chunks: a role header, the text
// in pieces of a few words, a finish chunk, the usage when asked for, then
// [DONE]. Each event is flushed on its own.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, id, model, answer string, usage map[string]int) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": Created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	events := []any{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
	for _, piece := range Pieces(answer) {
		events = append(events, chunk(map[string]any{"content": piece}, nil))
	}
	events = append(events, chunk(map[string]any{}, "stop"))
	if usage != nil {
		events = append(events, map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": Created, "model": model, "choices": []any{}, "usage": usage,
		})
	}
	events = append(events, nil)
	for i, ev := range events {
		if i > 1 && s.ChunkDelay > 0 {
			t := time.NewTimer(s.ChunkDelay)
			select {
			case <-r.Context().Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		data := []byte("[DONE]")
		if ev != nil {
			data, _ = json.Marshal(ev) // maps of strings, numbers and slices always marshal
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", data); err != nil {
			return
		}
		// A writer that cannot flush (a test recorder) still gets every
		// event, only not one at a time.
		_ = rc.Flush()
	}
}

// Pieces splits an answer into the texts of its streamed chunks: runs of
// up to three words, each with the spaces that follow it, so that joined
// they give back the answer exactly.
func Pieces(answer string) []string {
	var out []string
	start, words := 0, 0
	for i := 0; i < len(answer); i++ {
		if answer[i] != ' ' && answer[i] != '\n' {
			continue
		}
		// The end of a word: take the run of blanks after it too.
		j := i
		for j < len(answer) && (answer[j] == ' ' || answer[j] == '\n') {
			j++
		}
		if words++; words == 3 {
			out = append(out, answer[start:j])
			start, words = j, 0
		}
		i = j - 1
	}
	if start < len(answer) {
		out = append(out, answer[start:])
	}
	return out
}

// completionID is derived from the request, so the same request gets the
// same id.
func completionID(body []byte) string {
	sum := sha256.Sum256(body)
	return "chatcmpl-demo" + hex.EncodeToString(sum[:8])
}

// tokens estimates a token count the way OpenAI's rule of thumb does: one
// token per four bytes.
func tokens(b []byte) int { return (len(b) + 3) / 4 }

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // callers pass maps of strings, numbers and slices
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError answers in OpenAI's error shape, which every OpenAI client
// turns into its API error.
func writeError(w http.ResponseWriter, status int, code, param, msg string) {
	var p any
	if param != "" {
		p = param
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": p, "code": code,
	}})
}
